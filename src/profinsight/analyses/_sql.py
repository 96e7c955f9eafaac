"""Small helpers every analysis shares."""

from __future__ import annotations

import pandas as pd

from ..profile import to_pandas

#: device tasks that make up the step (the vendor's compute + communication)
STEP_TASKS = "kind IN ('kernel', 'communication')"


def query(profile, sql: str, params: list | None = None) -> pd.DataFrame:
    """Run SQL over the profile's canonical tables; a plain DataFrame with nullable dtypes."""
    con = profile.connection()
    rel = con.sql(sql, params=params) if params else con.sql(sql)
    return to_pandas(rel.to_arrow_table())


def scope(rank=None, step=None, alias: str = "") -> str:
    """SQL condition for the optional rank / step filters every analysis offers (integers,
    inlined): ``TRUE`` when neither is given."""
    a = f"{alias}." if alias else ""
    cond = ["TRUE"]
    if rank is not None:
        cond.append(f"{a}rank = {int(rank)}")
    if step is not None:
        cond.append(f"{a}step = {int(step)}")
    return " AND ".join(cond)
