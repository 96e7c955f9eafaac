"""Generate ``docs/tables.md`` from the declarations: ``python -m profinsight.schema.docs``.

A test checks that the committed page equals this output, so docs never drift from the code.
"""

from __future__ import annotations

import sys

from .tables import PMU_PREFIX, TABLES


def render() -> str:
    lines = [
        "# Canonical tables",
        "",
        "Generated from `src/profinsight/schema/tables.py` by `python -m profinsight.schema.docs`; "
        "do not edit by hand.",
        "",
        "Times are integer nanoseconds (`*_ns`, epoch time where absolute), sizes integer bytes. "
        "Every importer fills these tables and nothing downstream knows which format a row "
        "came from. Read them with `Profile.table(name)` (pandas), `Profile.arrow(name)` or "
        "`Profile.sql(...)` (DuckDB; each table is a view by its name).",
        "",
    ]
    for t in TABLES.values():
        lines += [f"## `{t.name}`", "", t.doc, "", "| column | type | unit | meaning |", "|---|---|---|---|"]
        for c in t.columns:
            lines.append(f"| `{c.name}` | {c.type} | {c.unit} | {c.doc.replace('|', '/')} |")
        if t.name == "device_tasks":
            lines.append(
                f"| `{PMU_PREFIX}*` | double | | PMU metrics when collected: ratios 0..1 "
                "(`pmu_aic_mac_ratio`), times in ns (`pmu_aic_mac_time_ns`), cycles (`pmu_aic_total_cycles`) |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(render())
