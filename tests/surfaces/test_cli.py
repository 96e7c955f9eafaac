"""The CLI as a user runs it: exit codes, formats, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from profinsight.cli import main


def run_cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "profinsight.cli", *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )


def test_info_on_the_bundled_sample(capsys):
    assert main(["info", "--sample"]) == 0
    out = capsys.readouterr().out
    assert "ascend_text" in out and "device_tasks" in out and "Level1" in out


def test_info_json(capsys, fixtures):
    assert main(["info", str(fixtures / "ascend_pt/text_level1"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ranks"] == [0, 1] and data["steps"] == [50]
    assert data["tables"]["device_tasks"] > 0


def test_doctor_exit_codes(fixtures, tmp_path, capsys):
    assert main(["doctor", str(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")]) == 0
    assert main(["doctor", str(fixtures / "ascend_pt")]) == 1  # mixed runs: an error, listed
    out = capsys.readouterr().out
    assert "mixed-runs" in out and "text_level1" in out
    assert main(["doctor", str(tmp_path)]) == 2  # nothing readable
    assert main(["doctor"]) == 2  # bad usage


def test_doctor_json_lists_diagnostics(fixtures, capsys):
    assert main(["doctor", str(fixtures / "ascend_pt/text_level0/rank0_ascend_pt"), "--format", "json"]) == 0
    diags = json.loads(capsys.readouterr().out)
    assert all({"severity", "code", "message", "file", "fix"} <= set(d) for d in diags)
    assert any(d["severity"] in ("info", "warning") for d in diags)  # Level0: communication analysis missing


def test_no_traceback_for_users(tmp_path):
    r = run_cli("doctor", tmp_path / "does-not-exist")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "no such file" in r.stderr
    r = run_cli("info", tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "Fix:" in r.stderr
    r = run_cli("view-nothing")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_export_parquet(fixtures, tmp_path, capsys):
    out = tmp_path / "tables"
    assert (
        main(["export", str(fixtures / "ascend_pt/text_level1/rank1_ascend_pt"), "--format", "parquet", "-o", str(out)])
        == 0
    )
    t = pq.read_table(out / "device_tasks.parquet")
    assert t.num_rows > 191 and t.schema.field("start_ns").type.bit_width == 64
    assert (out / "run_info.parquet").exists()


def test_export_csv_and_bad_table(fixtures, tmp_path):
    assert main(["export", "--sample", "--format", "csv", "-o", str(tmp_path / "c"), "--tables", "steps"]) == 0
    assert (tmp_path / "c" / "steps.csv").read_text().startswith('"rank"')
    assert main(["export", "--sample", "-o", str(tmp_path / "d"), "--tables", "nope"]) == 2


@pytest.mark.parametrize("cmd", ["info", "doctor", "export"])
def test_help_everywhere(cmd):
    r = run_cli(cmd, "--help")
    assert r.returncode == 0 and "PATH" in r.stdout


def test_doctor_env_checks_the_installation(capsys, tmp_path, monkeypatch):
    assert main(["doctor", "--env"]) == 0
    out = capsys.readouterr().out
    assert "pyarrow" in out and "duckdb" in out and "writable" in out
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(blocker / "sub"))  # a path under a file: not writable
    assert main(["doctor", "--env", "--format", "json"]) == 0
    assert any(d["code"] == "cache-not-writable" for d in json.loads(capsys.readouterr().out))


def _failed_import(tmp_path):
    """A Kineto trace whose event list is unreadable: the rank fails to import."""
    bad = tmp_path / "broken.pt.trace.json"
    bad.write_text('{"schemaVersion": 1, "traceEvents": [{"ph": "X", "ts": ', encoding="utf-8")
    return bad


def test_analyze_says_a_failed_import_and_exits_1(tmp_path, capsys):
    assert main(["analyze", str(_failed_import(tmp_path))]) == 1
    out = capsys.readouterr().out
    assert out.startswith("Import failed") and "trace-invalid" in out and "broken.pt.trace.json" in out
    assert "No rule fired" not in out and "Nothing loaded" in out


def test_analyze_json_carries_the_diagnostics(tmp_path, fixtures, capsys):
    assert main(["analyze", str(_failed_import(tmp_path)), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["import_failed"] is True and "verdict" not in data
    assert [d["code"] for d in data["diagnostics"] if d["severity"] == "error"] == ["trace-invalid"]
    assert main(["analyze", str(fixtures / "ascend_pt/text_level1/rank0_ascend_pt"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["import_failed"] is False and "verdict" in data and isinstance(data["diagnostics"], list)


def test_analyze_markdown_leads_with_the_failure(tmp_path, capsys):
    out = tmp_path / "a.md"
    assert main(["analyze", str(_failed_import(tmp_path)), "--format", "md", "-o", str(out)]) == 1
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Import failed") and "trace-invalid" in text and "No rule fired" not in text


def test_view_list_names_every_analysis_and_its_parameters(capsys):
    """``view --help`` points at ``view --list``: it must work, and list each registered analysis
    with the parameters the registry declares (the same names the options take)."""
    from profinsight.registry import all_analyses

    assert main(["view", "--list"]) == 0
    out = capsys.readouterr().out
    for name, a in all_analyses().items():
        assert f"{name:20} {a.title}" in out
        for prm in a.params:
            assert f"--{prm.name.replace('_', '-')} {prm.type.__name__}" in out
    assert main(["view"]) == 2
    assert "view --list" in capsys.readouterr().err


def _damaged_level0(fixtures, tmp_path):
    """A copy of text_level0 rank 0 with two sizes of operator_memory.csv damaged: the load sets
    them to null with one csv-bad-values warning."""
    import shutil

    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt/text_level0/rank0_ascend_pt", run)
    mem = run / "ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    lines = mem.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace(",18816.5,", ",abc,", 1)
    lines[2] = lines[2].replace(",0.5,", ",x1,", 1)
    mem.write_text("".join(lines), encoding="utf-8")
    return run


def test_analyze_ends_with_the_count_of_warnings_about_the_input(fixtures, tmp_path, capsys):
    """The report on damaged input is still whole, and its last line counts the warning and
    names the command that lists it, in the report's language."""
    run = _damaged_level0(fixtures, tmp_path)
    tail = (
        f"1 warning about the input (csv-bad-values): `profinsight doctor {run}` lists it with the files and the fix."
    )
    assert main(["analyze", str(run), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == tail
    assert main(["analyze", str(run), "--format", "md", "--lang", "en"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == tail
    assert main(["analyze", str(run), "--lang", "zh"]) == 0
    zh = f"输入数据有 1 条警告（csv-bad-values）：`profinsight doctor {run}` 列出它的文件和修复方法。"
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == zh
    assert main(["analyze", str(fixtures / "ascend_pt/text_level0/rank0_ascend_pt")]) == 0  # whole: no such line
    assert "about the input" not in capsys.readouterr().out


def test_report_page_says_and_lists_the_warnings_about_the_input(fixtures, tmp_path):
    """A page sent to a colleague says under its first line that the load warned, and lists each
    warning with its file and fix before the glossary."""
    run = _damaged_level0(fixtures, tmp_path)
    out = tmp_path / "r.html"
    assert main(["report", str(run), "-o", str(out), "--lang", "en"]) == 0
    page = out.read_text(encoding="utf-8")
    note = (
        "<p class='input-warnings-note'><a href='#input-warnings'>The load warned 1 time(s) about the input "
        "(csv-bad-values); each warning, with its file and fix, is listed at the end of this page.</a></p>"
    )
    assert page.index(note) < page.index("id='verdict'")
    item = (
        "<li><b>csv-bad-values</b> rank 0: operator_memory.csv: 2 value(s) of column &#x27;Size(KB)&#x27; are not "
        "usable numbers (&#x27;abc&#x27;, &#x27;x1&#x27;): set to null, their rows kept."
        f"<br><code>{run / 'ASCEND_PROFILER_OUTPUT/operator_memory.csv'}</code>"
    )
    assert (
        page.index("<h2 id='input-warnings'>Warnings about the input</h2>")
        < page.index(item)
        < page.index("id='terms'")
    )
    assert main(["report", str(fixtures / "ascend_pt/text_level0/rank0_ascend_pt"), "-o", str(out)]) == 0
    assert "input-warnings" not in out.read_text(encoding="utf-8")


def test_compare_ends_with_the_warnings_of_each_run(fixtures, tmp_path, capsys):
    """compare names the run whose input the load warned about, and only that one."""
    run = _damaged_level0(fixtures, tmp_path)
    base = fixtures / "ascend_pt/text_level0/rank0_ascend_pt"
    assert main(["compare", str(base), str(run), "--name", "base", "--name", "damaged", "--lang", "en"]) == 0
    lines = capsys.readouterr().out.rstrip().splitlines()
    want = f"damaged: 1 warning about the input (csv-bad-values): `profinsight doctor {run}` lists it with the files and the fix."
    assert lines[-1] == want and not any(x.startswith("base: ") for x in lines)
    page = tmp_path / "cmp.html"
    assert main(["compare", str(base), str(run), "--name", "base", "--name", "damaged", "-o", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    section = text[text.index("<div class='input-warnings'>") :]
    assert "<b>damaged</b> (csv-bad-values)</div><ul><li><b>csv-bad-values</b> rank 0: operator_memory.csv" in section
    assert "<b>base</b>" not in section


def test_view_says_the_warnings_on_stderr_and_keeps_stdout_the_result(fixtures, tmp_path, capsys):
    """A CSV piped on stays a CSV: the warnings line goes to stderr, after the result."""
    run = _damaged_level0(fixtures, tmp_path)
    assert main(["view", "op_summary", str(run), "--format", "csv", "--lang", "en"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("name,type,core,count,") and "about the input" not in out
    want = (
        f"1 warning about the input (csv-bad-values): `profinsight doctor {run}` lists it with the files and the fix."
    )
    assert err.rstrip().splitlines()[-1] == want
    assert main(["view", "op_summary", str(run), "--format", "json"]) == 0  # JSON carries them itself
    out, err = capsys.readouterr()
    assert "about the input" not in err and "csv-bad-values" in out
