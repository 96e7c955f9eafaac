"""The engine side of ``profinsight mcp`` without the SDK: which paths it opens (the server's
root checks), the timeline window, the viewer links, and the doc's generated tool list."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profinsight import timeline
from profinsight.agents import make_session
from profinsight.agents.docs import BEGIN, END, render
from profinsight.errors import ProfileError
from profinsight.samples import sample_path

SAMPLE = "rank0_ascend_pt"
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("bad", ["../outside/" + SAMPLE, "link", ".hidden/" + SAMPLE, "/etc", "", "2:x"])
def test_refused_paths(session, bad):
    with pytest.raises(ProfileError) as err:
        session.load(bad)
    assert err.value.fix


@pytest.fixture(scope="module")
def two(root, tmp_path_factory):
    """A session over two roots, the second holding another copy of the sample under runs/."""
    other = tmp_path_factory.mktemp("second")
    shutil.copytree(sample_path(), other / "runs" / SAMPLE)
    return make_session([root, other]), other


def test_ids_relative_to_roots(two):
    s, other = two
    assert s.load(SAMPLE)["profile_id"] == SAMPLE
    assert s.load(str(other / "runs" / SAMPLE))["profile_id"] == f"2:runs/{SAMPLE}"
    assert s.load(f"2:runs/{SAMPLE}")["ranks"] == [0]  # the id load gave is a path for every tool
    listing = s.discover(None)
    assert sorted(r["id"] for r in listing["runs"]) == [f"2:runs/{SAMPLE}", SAMPLE]
    assert [r["id"] for r in s.discover(str(other / "runs"))["runs"]] == [f"2:runs/{SAMPLE}"]
    with pytest.raises(ProfileError, match="folder holding 1 run"):
        s.load(str(other / "runs"))


def test_experiment_names(root, tmp_path, monkeypatch):
    from profinsight.collection.registry import add

    monkeypatch.setenv("PROFINSIGHT_EXPERIMENTS", str(tmp_path / "exp"))
    add("inside", root / SAMPLE, folder=tmp_path / "exp")
    add("elsewhere", tmp_path / "outside" / SAMPLE, folder=tmp_path / "exp")
    s = make_session([root])
    assert s.load("inside")["profile_id"] == SAMPLE
    with pytest.raises(ProfileError, match="elsewhere is not a profile under the folders"):
        s.load("elsewhere")


def test_timeline_window_at_a_gap(session):
    p = session.roots.profile(SAMPLE)[1]
    gap = p.advise(lang="en").set_index("rule").loc["idle_gaps", "evidence"]["longest_gaps"][0]
    origin = timeline.index_of(p).origin_ns
    got = session.timeline_window(SAMPLE, 0, gap["start_ns"] - origin, gap["end_ns"] - origin, 1000, 1000)
    assert got["origin_ns"] == origin and got["px_ns"] == (gap["end_ns"] - gap["start_ns"]) / 1000
    device = [r for r in got["rows"] if r[0] == "Ascend Hardware"]
    # the gap is idle on the device: no compute kernel starts inside it
    kernels = p.sql(
        f"SELECT count(*) AS n FROM device_tasks WHERE kind = 'kernel' AND start_ns > {gap['start_ns']} "
        f"AND start_ns < {gap['end_ns']}"
    )["n"].iloc[0]
    assert kernels == 0
    inside = [r for r in device if gap["start_ns"] - origin < r[3] < gap["end_ns"] - origin]
    assert not [r for r in inside if r[2] == gap["next_task"]]
    # the host dispatches the op the advisor named during the gap
    assert any(r[2] == gap["host_op"] for r in got["rows"])


def test_viewer_link_at_a_finding(session):
    p = session.roots.profile(SAMPLE)[1]
    w = p.advise(lang="en").set_index("rule").loc["idle_gaps", "evidence"]["window"]
    got = session.viewer_link(SAMPLE, rule="idle_gaps")
    q = f"start={w['start_ns']}&end={w['end_ns']}&rank=0"
    assert got["standalone"] == f"http://127.0.0.1:8765/?token=T#{SAMPLE}/timeline?{q}"
    assert got["jupyterlab"] == (
        f"http://localhost:8888/lab?token=J&profinsight={SAMPLE}%2Ftimeline%3F"
        + q.replace("=", "%3D").replace("&", "%26")
    )
    plain = session.viewer_link(SAMPLE, view="operators")
    assert plain["standalone"] == f"http://127.0.0.1:8765/?token=T#{SAMPLE}/operators"
    with pytest.raises(ProfileError, match="rule 'nope' found nothing"):
        session.viewer_link(SAMPLE, rule="nope")


def test_findings_carry_viewer_links(session):
    got = session.analysis("advise", SAMPLE, {"lang": "en"}, 50)
    for f in got["findings"]:
        assert f["basis"] == "step"  # the sample records its steps: each figure is of the step
        w = f["evidence"]["window"]
        assert f"start={w['start_ns']}&end={w['end_ns']}" in f["viewer"]["standalone"]


def test_doc_lists_every_tool():
    page = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    assert BEGIN in page and END in page
    assert page == render(page), "docs/agents.md is stale: run python -m profinsight.agents.docs"


def test_compare_and_ranks_equal_the_facade(two):
    import profinsight

    s, other = two
    got = s.compare(SAMPLE, [str(other / "runs" / SAMPLE)], max_rows=1000)
    p, q = s.roots.profile(SAMPLE)[1], s.roots.profile(f"2:runs/{SAMPLE}")[1]
    want = profinsight.compare(p, q, names=[SAMPLE, f"2:runs/{SAMPLE}"]).to_dict()
    assert [r["name"] for r in got["runs"]] == [SAMPLE, f"2:runs/{SAMPLE}"]
    assert got["steps"] == want["steps"] and got["verdicts"] == want["verdicts"]
    assert got["summary"] == want["summary"]
    ranks = s.ranks(SAMPLE)
    assert ranks["ranks"] == [0] and ranks["verdict"] == profinsight.ranks_report(p).verdict()
    assert ranks["summary"] == profinsight.ranks_report(p).to_dict()["summary"]


def test_help_does_not_import_the_sdk():
    import subprocess
    import sys

    code = "import sys; from profinsight.cli import build_parser; build_parser(); print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_doctor_env_reports_the_sdk():
    from importlib.metadata import version

    from profinsight.cli.env_checks import environment_extra_checks

    got = [d for d in environment_extra_checks() if d.code.startswith("mcp")]
    assert [(d.code, d.message.split(":")[0]) for d in got] == [("mcp", f"mcp {version('mcp')}")]
