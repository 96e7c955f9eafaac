"""The CSV deliverables of ``mindstudio_profiler_output/`` that the timeline lacks, in DuckDB SQL.

- ``step_trace_*.csv``: the iterations, where no ``step_trace_*.json`` came along
  (``Iteration End(us)`` and ``Iteration Time(us)`` on the timeline's clock) -> ``ms_iter``.
- ``op_summary_*.csv``: one row per device task with what the timeline does not record -- the op
  type, shapes, data types, formats, block dims (reference 4.2).  It lists the same tasks as the
  timeline's hardware lanes, so it adds columns and never rows: the n-th row of a (stream, task
  id) goes to the n-th kernel of that (stream, task id) in time order (task ids wrap in long
  captures, and the two files need not write times on the same clock).

A file cut into ``*_slice_<k>_*`` parts is read as the one file its parts make, in slice order.
Several devices share a file: the rows of this rank's ``Device_id`` are kept.
"""

from __future__ import annotations

from pathlib import Path

from ... import diagnostics as dg
from .._common import read_csv_by_header, sql_str

#: the file number iterations of a step-trace CSV get (after every JSON file: the JSON wins)
CSV_FILE_NO = 1 << 20

_OP_COLUMNS = {
    "type": ("OP Type", "Type"),
    "op_state": ("OP State",),
    "input_shapes": ("Input Shapes",),
    "input_dtypes": ("Input Data Types",),
    "input_formats": ("Input Formats",),
    "output_shapes": ("Output Shapes",),
    "output_dtypes": ("Output Data Types",),
    "output_formats": ("Output Formats",),
}
_BLOCK = {"block_dim": ("Block Num", "Block Dim"), "mix_block_dim": ("Mix Block Num", "Mix Block Dim")}


def _pick(cols: list[str], *names: str) -> str:
    for n in names:
        if n in cols:
            return '"' + n.replace('"', '""') + '"'
    return "NULL"


def read_parts(con, files: list[Path], table: str, rank, diags: list) -> list[str] | None:
    """The parts of one CSV deliverable (slices in order) as table ``table`` (all text).

    A part whose dialect DuckDB's sniffer refuses (a few damaged rows are enough) would take the
    whole deliverable with it; the parts are then read again one by one by their headers, and
    the rows that still do not fit are dropped and counted (``csv-bad-rows``)."""
    if not files:
        return None
    paths = "[" + ", ".join(sql_str(p) for p in files) + "]"
    try:
        con.execute(f"""CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_csv({paths}, all_varchar=true,
            header=true, union_by_name=true, quote='"', escape='"')""")
    except Exception:  # noqa: BLE001 - the sniffer refused a part: read each by its header
        try:
            dropped = _read_by_header(con, files, table)
        except Exception as exc:  # noqa: BLE001 - any reader failure is a user-facing file problem
            diags.append(
                dg.warning(
                    "csv-unreadable",
                    f"{files[0].name} could not be read ({str(exc).splitlines()[0]}); what it adds stays empty",
                    file=files[0],
                    fix="export the collection again (msprof --export=on --output=<PROF_DIR>)",
                    rank=rank,
                )
            )
            return None
        for path, n in dropped:
            diags.append(
                dg.warning(
                    "csv-bad-rows",
                    f"{path.name}: {n} malformed row(s) were dropped, the rest loaded",
                    file=path,
                    fix="the file was damaged or cut; export the collection again for complete data",
                    rank=rank,
                )
            )
    return [r[0] for r in con.sql(f"DESCRIBE {table}").fetchall()]


def _read_by_header(con, files: list[Path], table: str) -> list[tuple[Path, int]]:
    """``files`` into ``table`` without the dialect sniffer (:func:`.._common.read_csv_by_header`),
    their columns matched by name; returns (file, rows dropped) for each file that lost rows."""
    dropped = []
    for i, path in enumerate(files):
        n = read_csv_by_header(con, path, f"{table}_part{i}")[1]
        if n:
            dropped.append((path, n))
    parts = " UNION ALL BY NAME ".join(f"SELECT * FROM {table}_part{i}" for i in range(len(files)))
    con.execute(f"CREATE OR REPLACE TABLE {table} AS {parts}")
    for i in range(len(files)):
        con.execute(f"DROP TABLE {table}_part{i}")
    return dropped


def _device_filter(cols: list[str], device: int | None) -> str:
    col = _pick(cols, "Device_id", "Device ID")
    if device is None or col == "NULL":
        return "true"
    return f"coalesce(int_or_null({col}) = {int(device)}, true)"


def load_step_trace_csv(con, files: list[Path], device: int | None, rank, diags: list) -> int:
    """Iterations of ``step_trace_*.csv`` into ``ms_iter``; returns how many rows it added."""
    cols = read_parts(con, files, "st_csv", rank, diags)
    if not cols or "Iteration ID" not in cols:
        return 0
    end, time = _pick(cols, "Iteration End(us)"), _pick(cols, "Iteration Time(us)")
    con.execute(f"""INSERT INTO ms_iter
        SELECT {CSV_FILE_NO}, row_number() OVER (), NULL, NULL, ts_ns({end}) - dur_ns({time}), dur_ns({time}),
               int_or_null("Iteration ID"), ts_ns({end}), int_or_null({_pick(cols, "Model ID")})
        FROM st_csv WHERE {_device_filter(cols, device)} AND ts_ns({end}) IS NOT NULL""")
    return con.sql("SELECT count(*) FROM st_csv").fetchall()[0][0]


def load_op_summary(con, files: list[Path], device: int | None, rank, diags: list) -> tuple[int, int]:
    """Table ``op_sum`` (stream, task_id, occurrence, the columns of :data:`_OP_COLUMNS`) from
    op_summary_*.csv; returns (its rows, how many of them are kernels of the timeline)."""
    cols = read_parts(con, files, "op_raw", rank, diags)
    if not cols:
        return 0, 0
    p = lambda *n: _pick(cols, *n)  # noqa: E731
    text = ", ".join(f"clean({p(*names)}) AS {out}" for out, names in _OP_COLUMNS.items())
    text = text.replace("clean(" + p("Input Shapes") + ")", f"norm_list({p('Input Shapes')})")
    for c in ("Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"):
        text = text.replace(f"clean({p(c)})", f"norm_list({p(c)})")
    block = ", ".join(f"int_or_null({p(*names)}) AS {out}" for out, names in _BLOCK.items())
    start = p("Task Start Time(us)", "Start Time(us)")
    con.execute(f"""CREATE OR REPLACE TABLE op_sum AS
        SELECT *, row_number() OVER (PARTITION BY stream, task_id ORDER BY start_ns, op_row) AS occ FROM (
            SELECT (row_number() OVER ()) AS op_row, int_or_null({p("Stream ID")}) AS stream,
                   int_or_null({p("Task ID")}) AS task_id, ts_ns({start}) AS start_ns, {text}, {block}
            FROM op_raw WHERE {_device_filter(cols, device)}
              AND upper(coalesce(clean({p("Task Type", "Accelerator Core")}), '')) NOT IN ('HCCL', 'COMMUNICATION'))""")
    con.execute("DROP TABLE op_raw")
    total = con.sql("SELECT count(*) FROM op_sum").fetchall()[0][0]
    return total, _matched(con)


def _matched(con) -> int:
    con.execute("""CREATE OR REPLACE TABLE op_match AS
        SELECT k.task_uid, o.* EXCLUDE (stream, task_id, occ, op_row, start_ns)
        FROM (SELECT task_uid, stream, task_id,
                     row_number() OVER (PARTITION BY stream, task_id ORDER BY start_ns, task_uid) AS occ
              FROM dt WHERE kind = 'kernel') k
        JOIN op_sum o USING (stream, task_id, occ)""")
    return con.sql("SELECT count(*) FROM op_match").fetchall()[0][0]


def apply_op_summary(con) -> None:
    """``dt`` with the op_summary columns of its kernels (``op_match``) filled in."""
    cols = list(_OP_COLUMNS) + list(_BLOCK)
    have = {r[0] for r in con.sql("DESCRIBE dt").fetchall()}
    picks = ", ".join(
        (f"coalesce(dt.{c}, m.{c}) AS {c}" if c in have else f"m.{c} AS {c}") for c in cols if c != "type"
    )
    con.execute(f"""CREATE OR REPLACE TABLE dt AS
        SELECT dt.* EXCLUDE ({", ".join(c for c in cols if c in have)}),
               coalesce(dt.type, m.type) AS type, {picks}
        FROM dt LEFT JOIN op_match m USING (task_uid) ORDER BY task_uid""")
