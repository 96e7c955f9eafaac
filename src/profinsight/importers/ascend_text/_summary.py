"""The vendor's own step summary (``step_trace_time.csv``, else ``analysis.db`` ``StepTraceTime``):
the fallback for a partial export.

Why: a rank folder copied without ``trace_view.json`` and ``kernel_details.csv`` (ranks 1 and 3
of the published Qwen3 4-rank run hold only ``analysis.db``, ``communication*.json`` and
``step_trace_time.csv``) has no device task to derive steps from, yet the vendor wrote its step
numbers and per-step breakdown beside them.  Then -- and only then -- the canonical ``steps``
table takes its rows from that summary: the step numbers, no host or device range (the summary
holds durations, not times), and the vendor's figures in ``vendor_*_ns`` columns named after the
``step_breakdown`` columns they equal (``vendor_computing_ns`` is the vendor's ``Computing``, ...).
A rank with device tasks never gets these columns: its breakdown is derived from the tasks.

``Device_id`` (``deviceId`` in the DB) is the NPU the rank ran on (0, 1, 4, 5 in the Qwen3 run),
never the rank; it is kept as ``vendor_device`` and used as the rank's device when no other file
names one.
"""

from __future__ import annotations

from . import _files as F

STEP_TRACE, ANALYSIS_DB = F.SUMMARIES

#: (step_trace_time.csv header, analysis.db StepTraceTime column, vendor_* column of ``steps``)
FIGURES = (
    ("Computing", "computing", "vendor_computing_ns"),
    ("Communication(Not Overlapped)", "communication_not_overlapped", "vendor_comm_not_overlapped_ns"),
    ("Overlapped", "overlapped", "vendor_overlapped_ns"),
    ("Communication", "communication", "vendor_comm_ns"),
    ("Free", "free", "vendor_free_ns"),
    ("Stage", "stage", "vendor_stage_ns"),
    ("Bubble", "bubble", "vendor_bubble_ns"),
    (
        "Communication(Not Overlapped and Exclude Receive)",
        "communication_not_overlapped_and_exclude_receive",
        "vendor_comm_not_overlapped_exclude_receive_ns",
    ),
    ("Preparing", "preparing", "vendor_preparing_ns"),
)


def load_step_summary(con, inputs: F.Inputs) -> str | None:
    """Table ``vendor_steps`` (``step, vendor_device, vendor_*_ns``) from step_trace_time.csv, else
    from analysis.db's StepTraceTime.  Returns the file it came from, or None (no table)."""
    cols = inputs.read_csv(con, STEP_TRACE, "stt_raw") if inputs.path(STEP_TRACE).is_file() else None
    if cols is not None and "Step" in cols:
        p = lambda *n: F.pick(cols, *n)  # noqa: E731
        figures = ", ".join(f"dur_ns({p(csv)}) AS {out}" for csv, _, out in FIGURES)
        con.execute(f"""CREATE OR REPLACE TABLE vendor_steps AS
            SELECT TRY_CAST(regexp_extract(clean("Step"), '([0-9]+)$', 1) AS BIGINT) AS step,
                   int_or_null({p("Device_id", "Device ID")}) AS vendor_device, {figures}
            FROM stt_raw""")
        con.execute("DROP TABLE IF EXISTS stt_raw")
        return STEP_TRACE
    rows = _db_rows(inputs.path(ANALYSIS_DB))
    if not rows:
        return None
    import pyarrow as pa

    names = ["step", "vendor_device"] + [out for _, _, out in FIGURES]
    table = pa.table({n: pa.array([r[i] for r in rows], pa.int64()) for i, n in enumerate(names)})
    con.register("vendor_steps_arrow", table)
    con.execute("CREATE OR REPLACE TABLE vendor_steps AS SELECT * FROM vendor_steps_arrow")
    con.unregister("vendor_steps_arrow")
    return ANALYSIS_DB


def _db_rows(path) -> list[tuple]:
    """StepTraceTime rows as ``(step, device, figures in ns...)``; empty when absent/unreadable.
    Opened so that nothing is ever written beside the user's file (:func:`.._common.open_sqlite_state`)."""
    import re
    import sqlite3

    from .._common import open_sqlite

    if not path.is_file():
        return []
    cols = ", ".join(f'"{db}"' for _, db, _ in FIGURES)
    try:
        con = open_sqlite(path)
        try:
            raw = con.execute(f'SELECT step, deviceId, {cols} FROM "StepTraceTime"').fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return []
    out = []
    for step, device, *figs in raw:
        m = re.search(r"(\d+)$", str(step or ""))
        out.append(
            (
                int(m.group(1)) if m else None,
                int(device) if device is not None else None,
                *(None if v is None else round(float(v) * 1000) for v in figs),
            )
        )
    return out


def vendor_device(con) -> int | None:
    """The ``Device_id`` the summary names (one per rank), else None."""
    if not _has(con, "vendor_steps"):
        return None
    dev = con.sql("SELECT min(vendor_device) FROM vendor_steps").fetchall()[0][0]
    return None if dev is None else int(dev)


def fill_steps_from_summary(con, inputs: F.Inputs, source: str | None) -> bool:
    """Where no device task gave steps, take them from the vendor's summary (see the module
    docstring) and say so.  Returns whether it did."""
    if source is None or not _has(con, "vendor_steps"):
        return False
    if con.sql("SELECT count(*) FROM steps").fetchall()[0][0]:
        return False
    if con.sql("SELECT (SELECT count(*) FROM kd) + (SELECT count(*) FROM hw)").fetchall()[0][0]:
        return False
    figures = ", ".join(out for _, _, out in FIGURES)
    con.execute(f"""CREATE OR REPLACE TABLE steps AS
        SELECT step, NULL::BIGINT AS host_start_ns, NULL::BIGINT AS host_end_ns,
               NULL::BIGINT AS device_start_ns, NULL::BIGINT AS device_end_ns, vendor_device, {figures}
        FROM vendor_steps WHERE step IS NOT NULL ORDER BY step""")
    steps = [r[0] for r in con.sql("SELECT step FROM steps ORDER BY step").fetchall()]
    if not steps:
        return False
    missing = [n for n in (F.TRACE, F.KERNELS) if not inputs.path(n).is_file()]
    comm = inputs.path(F.COMMUNICATION).is_file()
    inputs.add(
        "warning",
        "vendor-step-summary",
        f"{' and '.join(missing)} {'are' if len(missing) > 1 else 'is'} missing: step(s) "
        f"{', '.join(map(str, steps))} come from the vendor's summary in {source} (its per-step figures are in "
        "the steps table's vendor_* columns)"
        + (", and comm_ops from the vendor's per-op summary in communication.json" if comm else "")
        + ". These are the vendor's figures, not derived from device tasks: there are no device tasks, "
        "so the step breakdown's device columns, kernel and timeline views stay empty for this rank.",
        inputs.path(source),
        "Copy the rank's whole ASCEND_PROFILER_OUTPUT folder (trace_view.json, kernel_details.csv) from the machine "
        "that recorded it, or re-run torch_npu.profiler.profiler.analyse(<rank folder>) there.",
    )
    return True


def _has(con, name: str) -> bool:
    return bool(con.sql(f"SELECT count(*) FROM duckdb_tables() WHERE table_name = '{name}'").fetchall()[0][0])
