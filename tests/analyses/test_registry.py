"""The registry gives every analysis a notebook method, a CLI form and rich display."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profinsight import ProfileError
from profinsight import registry as reg
from profinsight.cli import main
from profinsight.render.notebook import MIME, render_svg
from profinsight.results import ResultFrame
from profinsight.testing import profile_from_tables


@pytest.fixture
def kernel_counts():
    """A throw-away analysis registered for the test only."""

    @reg.analysis(
        "test_kernel_counts",
        title="Kernels per name",
        params=(
            reg.Param("top", int, None, help="keep N"),
            reg.Param("kind", str, "kernel", choices=("kernel", "memcpy")),
        ),
        chart=reg.Chart("bar", "name", ("n",)),
    )
    def kernel_counts(p, top, kind):
        """Count tasks per name."""
        from profinsight.analyses._sql import query

        df = query(
            p, f"select name, count(*) as n from device_tasks where kind = '{kind}' group by name order by n desc, name"
        )
        return df.head(top) if top else df

    yield reg.ANALYSES["test_kernel_counts"]
    del reg.ANALYSES["test_kernel_counts"]


@pytest.fixture
def prof():
    return profile_from_tables(
        {
            "device_tasks": pd.DataFrame(
                {
                    "kind": ["kernel", "kernel", "kernel", "memcpy"],
                    "name": ["a", "b", "a", "m"],
                    "start_ns": [0, 10, 20, 30],
                    "dur_ns": [5, 5, 5, 5],
                }
            )
        }
    )


def test_method_and_view_agree(kernel_counts, prof):
    df = prof.test_kernel_counts(top=1)
    assert isinstance(df, pd.DataFrame) and df.to_dict("list") == {"name": ["a"], "n": [2]}
    assert prof.view("test_kernel_counts", kind="memcpy").to_dict("list") == {"name": ["m"], "n": [1]}
    assert "test_kernel_counts" in dir(prof)
    assert prof.test_kernel_counts.__doc__ == "Count tasks per name."


def test_params_are_checked(kernel_counts, prof):
    with pytest.raises(ProfileError, match="no parameter"):
        prof.test_kernel_counts(bogus=1)
    with pytest.raises(ProfileError, match="one of"):
        prof.test_kernel_counts(kind="sync")
    with pytest.raises(ProfileError, match="must be int"):
        prof.test_kernel_counts(top="many")
    assert prof.test_kernel_counts(top="1").shape == (1, 2)  # CLI text is converted


def test_rich_display(kernel_counts, prof):
    df = prof.test_kernel_counts()
    html = df._repr_html_()
    assert "<svg" in html and "<table" in html and "Kernels per name" in html
    bundle = df._repr_mimebundle_()
    assert bundle[MIME]["rows"] == [{"name": "a", "n": 2}, {"name": "b", "n": 1}]
    assert bundle[MIME]["chart"]["kind"] == "bar"
    assert type(df.head(1)) is pd.DataFrame  # slicing gives a plain DataFrame


def test_svg_kinds():
    df = pd.DataFrame({"x": [0, 1, 2], "a": [1.0, 3.0, 2.0], "b": [0.5, 0.5, None]})
    assert "<polyline" in render_svg(df, reg.Chart("line", "x", ("a", "b")))
    assert render_svg(df, reg.Chart("stacked", "x", ("a", "b"))).count("<rect") >= 6


def test_cli_view_forms(kernel_counts, fixtures, capsys):
    path = str(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    assert main(["view", "test_kernel_counts", path, "--top", "2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 2 and rows[0]["n"] >= rows[1]["n"]
    assert main(["view", "test_kernel_counts", path, "-p", "kind=memcpy", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "name,n"
    assert main(["view", "test_kernel_counts", path, "--kind", "sync"]) == 2
    assert main(["view", "no_such_view", path]) == 2


def test_unknown_option_outside_view_exits_2():
    with pytest.raises(SystemExit) as exc:
        main(["info", "--sample", "--bogus"])
    assert exc.value.code == 2


def test_analysis_frame_wraps_without_copying_meaning(kernel_counts):
    a = reg.ANALYSES["test_kernel_counts"]
    f = ResultFrame.wrap(pd.DataFrame({"name": ["x"], "n": [1]}), a, {"top": 1})
    assert f._analysis is a and f._params == {"top": 1}


def test_the_table_fills_itself_whichever_surface_reads_it_first():
    """The table sits below the analyses, so it cannot import them; the package root lends it a
    function that does.  A fresh process that reads it through the CLI, or through the registry
    module alone, sees every analysis (the advisor's included)."""
    import subprocess
    import sys

    code = "from profinsight.registry import all_analyses; print(' '.join(sorted(all_analyses())))"
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    listed = subprocess.run(
        [sys.executable, "-m", "profinsight.cli", "view", "list"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    import profinsight.advisor.analysis  # noqa: F401
    import profinsight.analyses  # noqa: F401

    expected = sorted(reg.ANALYSES)
    assert {"op_summary", "slow_ranks", "advise"} <= set(expected)
    assert alone == expected
    assert [line.split()[0] for line in listed] == expected


def test_invalid_parameter_pairs_are_declared_for_forms():
    """op_summary groups host ops by name or name_shape only: the registration says so, the
    analyses route hands the rule to the viewer's form, and the analysis refuses the pair."""
    import pytest

    from profinsight.errors import ProfileError
    from profinsight.registry import get
    from profinsight.server.handlers import describe_analysis
    from profinsight.testing import profile_from_tables

    by = {p.name: p for p in get("op_summary").params}["by"]
    assert by.requires == (("type", "where", ("device",)), ("core", "where", ("device",)))
    info = {p["name"]: p for p in describe_analysis(get("op_summary"))["params"]}
    assert info["by"]["requires"][0] == {"value": "type", "param": "where", "allowed": ["device"]}
    assert info["where"]["requires"] == []
    with pytest.raises(ProfileError, match="groups by name or name_shape"):
        profile_from_tables({}).op_summary(by="type", where="host")


def test_the_table_fills_once_while_other_threads_wait():
    """A server asks from two threads (the engine and the first-paint worker): a thread asking
    while another fills the table waits for it, never sees it half-filled (fresh process)."""
    import subprocess
    import sys

    code = """
import threading, time
import profinsight
from profinsight import hooks, registry

profinsight.load  # the package root provides the slot that imports the analysis modules
real = hooks.get("register_analyses")

def slow_fill():
    time.sleep(0.3)  # the analysis modules take a while to import
    real()

hooks.provide("register_analyses", slow_fill)
out = []
threads = [threading.Thread(target=lambda: out.append(len(registry.all_analyses()))) for _ in range(4)]
for t in threads:
    t.start()
    time.sleep(0.02)
for t in threads:
    t.join()
print(sorted(set(out)), len(registry.ANALYSES))
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    seen, total = got.rsplit(" ", 1)
    assert int(total) > 20 and seen == f"[{total}]"  # every thread saw the whole table


def _declared_invalid(a, combo: dict) -> bool:
    """Whether ``combo`` (parameter -> value) breaks one of ``a``'s declared ``requires`` rules."""
    for p in a.params:
        for value, other, allowed in p.requires:
            if combo.get(p.name) == value and other in combo and combo[other] not in allowed:
                return True
    return False


@pytest.mark.slow
def test_every_pair_of_choices_answers_or_is_declared(fixtures):
    """The Analyses form offers every value of every select: each combination of the choices of
    every registered analysis either answers on a real two-rank run or is declared by
    ``requires`` (and then refused with a ProfileError), so the form never offers a pair with no
    answer.  Rules only name parameters and values that exist."""
    import itertools

    import profinsight
    from profinsight.registry import all_analyses

    p = profinsight.load(fixtures / "ascend_pt" / "text_level1")
    refused: dict[str, list[dict]] = {}
    for name, a in sorted(all_analyses().items()):
        known = {q.name: q for q in a.params}
        for q in a.params:
            for value, other, allowed in q.requires:
                assert q.choices and value in q.choices, (name, q.name, value)
                assert known[other].choices and set(allowed) <= set(known[other].choices), (name, other, allowed)
        selects = [q for q in a.params if q.choices and q.type is not dict]
        if len(selects) < 2:
            continue
        for values in itertools.product(*(q.choices for q in selects)):
            combo = dict(zip((q.name for q in selects), values, strict=True))
            try:
                a.run(p, **combo)
                answered = True
            except ProfileError:
                answered = False
            assert answered != _declared_invalid(a, combo), (name, combo, answered)
            if not answered:
                refused.setdefault(name, []).append(combo)
    # op_summary is the one analysis with several selects; its host side groups by name or
    # name_shape only and counts every task an op launched (kinds has no meaning there)
    assert sorted(refused) == ["op_summary"]
    assert sorted((c["by"], c["where"], c["kinds"]) for c in refused["op_summary"]) == [
        ("core", "host", "all"),
        ("core", "host", "compute"),
        ("name", "host", "all"),
        ("name_shape", "host", "all"),
        ("type", "host", "all"),
        ("type", "host", "compute"),
    ]
    host = p.op_summary(where="host", by="name")
    assert len(host) > 0 and "device_total_us" in host.columns


def test_closed_sets_of_values_are_choices():
    """A parameter whose values form a closed set is a select in the form, not a text field that
    accepts what the analysis then refuses: the links' ``summary`` is one of comm_matrix's."""
    from profinsight.analyses.communication import SUMMARIES
    from profinsight.registry import get

    for name in ("comm_matrix", "slow_links", "link_latency"):
        assert {q.name: q for q in get(name).params}["summary"].choices == SUMMARIES
    with pytest.raises(ProfileError, match="summary must be one of top1"):
        get("slow_links").bind(summary="sum")
