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
