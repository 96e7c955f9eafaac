"""Every diagnostic code the loaders emit on the fixtures and on broken inputs is documented."""

from __future__ import annotations

import shutil

import pytest
from _support import REPO

import profinsight


@pytest.mark.slow
def test_every_emitted_code_is_documented(fixtures, tmp_path):
    doc = (REPO / "docs" / "doctor.md").read_text(encoding="utf-8")
    codes = set()
    paths = [fixtures / "ascend_pt" / sub for sub in ("text_level0", "text_level1", "db_level0", "db_level1")]
    paths += sorted((fixtures / "kineto").glob("*.json.gz"))
    # broken inputs made in the test: a truncated trace and a rank without kernel_details.csv
    cut = tmp_path / "cut" / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt/text_level1/rank0_ascend_pt", cut)
    tv = cut / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    tv.write_bytes(tv.read_bytes()[: tv.stat().st_size // 2])
    (cut / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    paths.append(cut)
    for p in paths:
        codes |= {d.code for d in profinsight.load(p).diagnostics}
    assert {"trace-truncated", "missing-file", "level0-no-comm-analysis", "no-device-activity"} <= codes
    missing = sorted(c for c in codes if f"`{c}`" not in doc)
    assert not missing, f"undocumented diagnostic codes: {missing}"
