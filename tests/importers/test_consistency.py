"""The load's consistency checks of one rank's files (importers/checks.py ``consistency``): files
of different collections, tasks outside the capture window, duplicated device tasks, kernel counts
that differ from the vendor's own statistics.  Each on a copy of the real text_level1 rank 0 made
in tmp_path, damaged one way; the undamaged fixtures give none of them (the last test)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

import profinsight
from profinsight.i18n.diagnostics import DIAG, template_regex

RANK = ("ascend_pt", "text_level1", "rank0_ascend_pt")
OUT = "ASCEND_PROFILER_OUTPUT"
NEW = ("collections-apart", "tasks-outside-capture", "tasks-duplicated", "rows-vs-vendor")


@pytest.fixture
def rank(fixtures, tmp_path) -> Path:
    dst = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures.joinpath(*RANK), dst)
    return dst


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write(path: Path, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


def _shift(cell: str, us: int) -> str:
    whole, _, frac = cell.strip().partition(".")
    return f"{int(whole) + us}.{frac}\t"


def _said(p, code):
    got = [d for d in p.diagnostics if d.code == code]
    for d in got:
        assert template_regex(DIAG["en"][f"diag.{code}"]).match(d.message), d.message
        assert d.severity == "warning" and d.fix == DIAG["en"][f"diag.{code}.fix"]
    return got


def test_a_kernel_details_from_another_collection_is_said_at_load(rank):
    """kernel_details.csv of a run 54 days later beside this run's trace_view.json (the issue's
    case): the device tasks and the host activity do not overlap -- said by the load itself, with
    the tasks outside the capture window that profiler_info records."""
    kd = rank / OUT / "kernel_details.csv"
    rows = _rows(kd)
    col = rows[0].index("Start Time(us)")
    for r in rows[1:]:
        r[col] = _shift(r[col], 54 * 86_400 * 10**6)
    _write(kd, rows)
    p = profinsight.load(rank)
    (apart,) = _said(p, "collections-apart")
    assert "54.0 days apart" in apart.message and "kernel_details.csv" in apart.message
    assert "trace_view.json" in apart.message and apart.file == str(rank)
    (outside,) = _said(p, "tasks-outside-capture")
    # every kernel and HCCL row of kernel_details.csv (191) and nothing else
    assert outside.message.startswith("191 device task(s) of rank 0 lie outside")
    # the advisor says it too where the report is read, and no preparing time is made of 54 days
    assert "timestamp_sanity" in set(p.advise()["rule"])
    assert p.step_breakdown()["preparing_us"].isna().all()


def test_tasks_outside_the_capture_window_are_counted_and_the_first_named(rank):
    kd = rank / OUT / "kernel_details.csv"
    rows = _rows(kd)
    col, name = rows[0].index("Start Time(us)"), rows[0].index("Name")
    last = sorted(range(1, len(rows)), key=lambda i: float(rows[i][col]))[-3:]
    for i in last:
        rows[i][col] = _shift(rows[i][col], 3600 * 10**6)  # an hour after the capture stopped
    _write(kd, rows)
    p = profinsight.load(rank)
    (d,) = _said(p, "tasks-outside-capture")
    first = min(last, key=lambda i: float(rows[i][col]))
    assert d.message.startswith("3 device task(s) of rank 0 lie outside the capture window that profiler_info")
    assert f"the first {rows[first][name]!r} at" in d.message
    assert not _said(p, "collections-apart")  # the ranges still overlap


def test_duplicated_kernel_rows_are_said_and_the_vendor_counts_disagree(rank):
    kd = rank / OUT / "kernel_details.csv"
    rows = _rows(kd)
    col = rows[0].index("Type")
    kernel = next(r for r in rows[1:] if r[col] == "TransData")
    rows += [list(kernel), list(kernel)]
    _write(kd, rows)
    p = profinsight.load(rank)
    (dup,) = _said(p, "tasks-duplicated")
    assert dup.message.startswith("2 device task(s) of rank 0 (kernel_details.csv) are exact copies of another")
    (vendor,) = _said(p, "rows-vs-vendor")
    assert vendor.message.startswith(
        "rank 0 loaded 189 kernel(s) from kernel_details.csv where the vendor's op_statistic.csv counts 187"
    )
    assert "1 op type(s) differ (TransData: 59 vs 57)" in vendor.message
    assert vendor.file.endswith("op_statistic.csv")


def test_kernel_rows_lost_since_the_export_differ_from_the_vendor_statistics(rank):
    kd = rank / OUT / "kernel_details.csv"
    rows = _rows(kd)
    col = rows[0].index("Type")
    gone = [i for i in range(1, len(rows)) if rows[i][col] == "MatMulV2"][:3]
    _write(kd, [r for i, r in enumerate(rows) if i not in gone])
    p = profinsight.load(rank)
    (d,) = _said(p, "rows-vs-vendor")
    assert "loaded 184 kernel(s)" in d.message and "(MatMulV2: 5 vs 8)" in d.message
    assert not _said(p, "tasks-duplicated")


def test_a_damaged_statistic_file_costs_only_its_check(rank):
    (rank / OUT / "op_statistic.csv").write_bytes(b"\xff\xfe garbage\n,,,\n")
    p = profinsight.load(rank)
    assert not [d for d in p.diagnostics if d.code in NEW]
    assert len(p.table("device_tasks")) > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "rel",
    [
        "ascend_pt/text_level0",
        "ascend_pt/text_level1",
        "ascend_pt/db_level1",
        "ascend_llm/qwen3_level2_4rank",
        "msprof/prof_timeline_2023",
        "msprof/msprof_db/msprof_0.db",
        "kineto/gpu_2rank_rank0.json.gz",
        "kineto/legacy/resnet50_tb_plugin_2021.json.gz",
    ],
)
def test_the_real_fixtures_are_consistent(fixtures, rel):
    """No false alarm: op_statistic.csv's counts equal the kernels loaded (187 per text_level1
    rank, 2,448 / 2,564 on Qwen3 ranks 0 / 2), every task lies inside its window."""
    p = profinsight.load(fixtures / rel)
    assert not [(d.code, d.message) for d in p.diagnostics if d.code in NEW]


@pytest.mark.slow
@pytest.mark.parametrize(
    "rel",
    [
        "ascend_pt/text_level1/rank0_ascend_pt",
        "ascend_llm/qwen3_level2_4rank/rank_0_ascend_pt",
        "ascend_llm/qwen3_level2_4rank/rank_2_ascend_pt",
    ],
)
def test_kernels_reconcile_with_the_vendor_statistics_within_a_thousandth(fixtures, rel):
    """op_statistic.csv's Count and Total Time(us) per (OP Type, Core Type) against the kernels
    loaded: counts equal, times within 0.1% (MatMulV3 on Qwen3 rank 2 is 282 AI_CORE + 2 MIX_AIC)."""
    p = profinsight.load(fixtures / rel)
    k = p.table("device_tasks")
    k = k[k.kind == "kernel"]
    got = k.groupby(["type", "core"]).agg(n=("dur_ns", "size"), us=("dur_ns", "sum"))
    with open(fixtures / rel / OUT / "op_statistic.csv", newline="", encoding="utf-8") as fh:
        vendor = list(csv.DictReader(fh))
    assert sum(int(r["Count"]) for r in vendor) == len(k)
    for r in vendor:
        row = got.loc[(r["OP Type"], r["Core Type"])]
        assert int(row["n"]) == int(r["Count"]), r
        assert row["us"] / 1000 == pytest.approx(float(r["Total Time(us)"]), rel=1e-3), r
