"""``kernel_details.csv`` -> DuckDB table ``kd``: one row per compute kernel or HCCL op, values
converted exactly (start to the ns from the decimal text), PMU columns renamed to the canonical
``pmu_*`` names shared with the DB importer.

PMU naming (must match the DB importer, which reads ``TASK_PMU_INFO`` names with times in ns):
``{metric}(us)`` -> ``pmu_{metric}_ns`` x1000, where ``aicore_time``/``aiv_time`` become
``aic_total_time``/``aiv_total_time`` (their DB names); ``{metric}(%)`` -> ``pmu_{metric}_ratio``
/100; a unit-less column keeps its name (``pmu_aic_mac_ratio``, ``pmu_aic_total_cycles``,
``pmu_aic_icache_miss_rate``); any other unit is appended as a slug
(``aic_l0a_read_bw(GB/s)`` -> ``pmu_aic_l0a_read_bw_gb_per_s``), value as written.
"""

from __future__ import annotations

import re

from .. import _torch_npu
from . import _files as F

#: kernel_details headers that are not PMU metrics (both spellings across versions)
BASE = {
    "Step Id",
    "Device_id",
    "Model ID",
    "Task ID",
    "Stream ID",
    "Name",
    "Type",
    "OP State",
    "Accelerator Core",
    "Start Time(us)",
    "Duration(us)",
    "Wait Time(us)",
    "Block Dim",
    "Block Num",
    "Mix Block Dim",
    "Mix Block Num",
    "HF32 Eligible",
    "Input Shapes",
    "Input Data Types",
    "Input Formats",
    "Output Shapes",
    "Output Data Types",
    "Output Formats",
    "Context ID",
    "Op Name",
    "OP Type",
    "Task Type",
    "Task Start Time(us)",
    "Task Duration(us)",
    "Task Wait Time(us)",
}
_RENAME = {"aicore_time": "aic_total_time", "aiv_time": "aiv_total_time"}
_COMM_CORES = "('HCCL', 'COMMUNICATION')"
#: the inner query's own columns (beside the CSV's, whose headers are never these)
_ROW, _INFERRED = '"kd row (profinsight)"', '"type from name (profinsight)"'


def pmu_column(header: str) -> tuple[str, float]:
    """Canonical ``pmu_*`` name and scale factor for a PMU header of kernel_details.csv."""
    m = re.match(r"^\s*(.*?)\s*\(([^)]*)\)\s*$", header)
    metric, unit = (m.group(1), m.group(2).strip()) if m else (header.strip(), "")
    metric = _slug(_RENAME.get(metric, metric))
    if unit == "us":
        return f"pmu_{metric}_ns", 1000.0
    if unit == "%":
        return f"pmu_{metric}_ratio", 0.01
    if unit:
        return f"pmu_{metric}_{_slug(unit.replace('/', ' per '))}", 1.0
    return f"pmu_{metric}", 1.0


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


#: value columns whose damaged cells become NULL (and are counted); a damaged start drops the row
_CONVERSIONS = dict.fromkeys(("Duration(us)", "Task Duration(us)", "Wait Time(us)", "Task Wait Time(us)"), "dur_ns")
_CONVERSIONS |= dict.fromkeys(("Block Dim", "Block Num", "Mix Block Dim", "Mix Block Num"), "int_cell")


def load_kernels(con, inputs: F.Inputs) -> list[str] | None:
    """Create ``kd`` from kernel_details.csv; returns the ``pmu_*`` column names, or None when
    the file is missing/unreadable (then ``kd`` exists but is empty)."""
    con.execute(_torch_npu.TYPE_FROM_NAME_MACRO)
    cols = inputs.read_csv(con, F.KERNELS, "kd_raw")
    if cols is None:
        con.execute(f"CREATE OR REPLACE TABLE kd AS SELECT * FROM ({_select([], [])}) WHERE false")
        return None
    pmu = [c for c in cols if c not in BASE]
    con.execute(f"CREATE OR REPLACE TABLE kd_all AS {_select(cols, pmu)}")
    inputs.report_unconverted(con, F.KERNELS, "kd_raw", cols, _CONVERSIONS)
    dropped = con.sql("SELECT count(*) FROM kd_all WHERE start_ns IS NULL OR name IS NULL").fetchall()[0][0]
    inputs.report_dropped(F.KERNELS, dropped, "their Name or Start Time(us) is empty or not a number")
    con.execute("CREATE OR REPLACE TABLE kd AS SELECT * FROM kd_all WHERE start_ns IS NOT NULL AND name IS NOT NULL")
    inferred = con.sql("SELECT count(*) FROM kd WHERE type_inferred").fetchall()[0][0]
    if inferred:
        note = _torch_npu.inferred_type_note(inferred, inputs.path(F.KERNELS), inputs.rank)
        inputs.diagnostics.append(note)
    return [pmu_column(c)[0] for c in pmu]


def _select(cols: list[str], pmu: list[str]) -> str:
    """SELECT turning kd_raw into kd (header aliases resolved; FROM kd_raw only when it exists)."""
    p = lambda *names: F.pick(cols, *names)  # noqa: E731
    core = f"clean({p('Accelerator Core', 'Task Type')})"
    name = f"clean({p('Name', 'Op Name')})"
    pmu_sql = "".join(
        f", TRY_CAST({F.pick(cols, c)} AS DOUBLE) * {pmu_column(c)[1]!r} AS {pmu_column(c)[0]}" for c in pmu
    )
    # Level0 records no type: the kernel name says it (see .._torch_npu.type_from_name).  Two
    # regular expressions per name, so the name is read only where the type is missing, in a
    # query of its own: written in two output columns, DuckDB computed it once for EVERY row
    # (a common sub-expression), 0.1 of the 0.2 s this statement took on a 100 MB profile
    # whose kernels all have a type
    comm = f"(upper({core}) IN {_COMM_CORES} OR ({core} IS NULL AND {name} LIKE 'hcom\\_%' ESCAPE '\\'))"
    inferred = (
        f"(CASE WHEN clean({p('Type', 'OP Type')}) IS NULL AND NOT coalesce({comm}, false) "
        f"THEN type_from_name({name}) END)"
    )
    # the CSV's row = its rowid (read in file order); a window numbering the rows runs on one thread
    if cols:
        source = f"FROM (SELECT rowid AS {_ROW}, *, {inferred} AS {_INFERRED} FROM kd_raw)"
        row, inferred = _ROW, _INFERRED
    else:
        source, row = "", "0::BIGINT"
    return f"""SELECT {row} AS kd_row,
        int_or_null({p("Step Id")}) AS step,
        int_or_null({p("Device_id")}) AS device,
        {name} AS name,
        coalesce(clean({p("Type", "OP Type")}),
                 CASE WHEN upper({core}) IN {_COMM_CORES} THEN regexp_extract({name}, '^(hcom_[A-Za-z0-9]+_)', 1)
                 END, {inferred}) AS type,
        clean({p("Type", "OP Type")}) IS NULL AND {inferred} IS NOT NULL AS type_inferred,
        CASE WHEN upper({core}) IN {_COMM_CORES} THEN 'HCCL' ELSE {core} END AS core,
        CASE WHEN upper({core}) IN {_COMM_CORES} OR ({core} IS NULL AND {name} LIKE 'hcom\\_%' ESCAPE '\\')
             THEN 'communication' ELSE 'kernel' END AS kind,
        ts_ns({p("Start Time(us)", "Task Start Time(us)")}) AS start_ns,
        dur_ns({p("Duration(us)", "Task Duration(us)")}) AS dur_ns,
        dur_ns({p("Wait Time(us)", "Task Wait Time(us)")}) AS wait_ns,
        int_or_null({p("Block Dim", "Block Num")}) AS block_dim,
        int_or_null({p("Mix Block Dim", "Mix Block Num")}) AS mix_block_dim,
        clean({p("OP State")}) AS op_state,
        norm_list({p("Input Shapes")}) AS input_shapes, norm_list({p("Input Data Types")}) AS input_dtypes,
        norm_list({p("Input Formats")}) AS input_formats, norm_list({p("Output Shapes")}) AS output_shapes,
        norm_list({p("Output Data Types")}) AS output_dtypes, norm_list({p("Output Formats")}) AS output_formats,
        int_or_null({p("Context ID")}) AS context_id,
        int_or_null({p("Stream ID")}) AS stream, int_or_null({p("Task ID")}) AS task_id,
        clean({p("HF32 Eligible")}) AS hf32_eligible{pmu_sql}
        {source}"""


def load_l2_cache(con, inputs: F.Inputs) -> bool:
    """``l2_cache.csv`` -> table ``l2`` (stream, task_id, name, hit/victim ratios); False if absent.
    It is joined to kernels on (stream, task id, name, occurrence) once device tasks know their
    stream: task ids wrap in long captures, so the n-th l2 row of a key goes to the n-th kernel."""
    cols = inputs.read_csv(con, F.L2_CACHE, "l2_raw")
    if cols is None:
        return False
    p = lambda *names: F.pick(cols, *names)  # noqa: E731
    con.execute(f"""CREATE OR REPLACE TABLE l2 AS SELECT
        int_or_null({p("Stream Id", "Stream ID")}) AS stream, int_or_null({p("Task Id", "Task ID")}) AS task_id,
        clean({p("Op Name")}) AS name, num_or_null({p("Hit Rate")}) AS pmu_l2_cache_hit_ratio,
        num_or_null({p("Victim Rate")}) AS pmu_l2_cache_victim_ratio, rowid + 1 AS l2_row
        FROM l2_raw""")
    con.execute("""CREATE OR REPLACE TABLE l2 AS SELECT *,
        row_number() OVER (PARTITION BY stream, task_id, name ORDER BY l2_row) AS occ FROM l2""")
    return True
