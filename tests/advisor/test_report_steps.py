"""The guided report lists every rank-step up to 20 of them; beyond that, per rank its mean and
the 10 longest rank-steps (a 454-step capture printed 908 rows and took seconds to draw)."""

from __future__ import annotations

import pandas as pd

from profinsight.advisor.report_data import LONGEST_STEPS, MAX_STEP_ROWS, _steps_shown


def _rows(n_steps: int) -> pd.DataFrame:
    rows = [
        {"rank": r, "step": s, "step_us": 1000.0 * s + r, "free_us": 10.0 * s}
        for r in (0, 1)
        for s in range(1, n_steps + 1)
    ]
    return pd.DataFrame(rows).astype({"rank": "Int64", "step": "Int64"})


def test_few_steps_are_all_shown():
    sb = _rows(MAX_STEP_ROWS // 2)
    shown, util = _steps_shown(sb, sb)
    assert shown is sb and util is sb


def test_many_steps_show_the_mean_and_the_longest():
    sb = _rows(15)  # 30 rank-steps
    util = sb.rename(columns={"step_us": "busy_ratio"})
    shown, u = _steps_shown(sb, util)
    assert list(shown["step"][:2]) == ["mean of 15", "mean of 15"]
    assert list(shown["step_us"][:2]) == [8000.0, 8001.0] and list(shown["free_us"][:2]) == [80.0, 80.0]
    longest = shown.iloc[2:]
    assert len(longest) == LONGEST_STEPS
    # the 10 longest: steps 11..15 of both ranks, listed by rank then step
    assert list(zip(longest["rank"], longest["step"])) == [(r, s) for r in (0, 1) for s in range(11, 16)]
    assert list(zip(u["rank"][2:], u["step"][2:])) == list(zip(longest["rank"], longest["step"]))
