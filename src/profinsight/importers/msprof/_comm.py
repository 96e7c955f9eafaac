"""msprof's communication analysis (``communication.json`` / ``communication_matrix.json``) ->
the vendor's time split and bytes in ``comm_ops``, and ``comm_links``.

Where: ``PROF_*/analyze/`` (reference 4.1) or the ``mindstudio_profiler_output/`` folder itself,
names maybe suffixed with the export's time (``communication_<time>.json``).  Two shapes are read:

- keyed by step and category like torch_npu's (reference 2.11 / 2.12):
  ``{"step<N>": {"collective" | "p2p": {"<op>@<group>": record}}}`` -- step N is iteration N;
- msprof's own, keyed by op alone (reference 4.2): ``{"<op>@<group>": record}`` for the ops and
  ``{"<op>@<group>": {"<src>-<dst>": link}}`` for the raw per-op links (no step, no summary).

The records are those of torch_npu's files (the same reader turns them into rows: sizes decimal
MB, times ms).  A record goes to the timeline's op of the same name: the n-th record of a name
(by step, then start) to the n-th op of that name (by start) -- the timeline keeps the exact
start and duration, the JSON adds transit / wait / sync / idle, group and bytes.  Records no op
matches are added as ops of their own (start and elapse from the JSON), as the text importer
does.  The files do not say which device an op ran on: with several devices sharing one file
they are not applied, and a note says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pyarrow as pa

from ... import diagnostics as dg
from ..ascend_text._comm import TRANSPORTS, _link_rows, _op_row

_OPS_RE = re.compile(r"^communication(_\d[^/]*)?\.json$")
_MATRIX_RE = re.compile(r"^communication_matrix(_\d[^/]*)?\.json$")
_STEP_RE = re.compile(r"^step(\d*)$")
_P2P = ("hcom_send", "hcom_receive", "hcom_batchsendrecv")
_FIX = "export the collection again (msprof --export=on --output=<PROF_DIR>)"

_OP_COLS = [
    "step",
    "category",
    "name",
    "group",
    "start_us",
    "elapse_ms",
    "transit_ms",
    "wait_ms",
    "sync_ms",
    "idle_ms",
] + [f"{t.lower()}_{k}" for t in TRANSPORTS for k in ("mb", "ms")]
_LINK_COLS = ["step", "category", "op_type", "summary", "group", "src_rank", "dst_rank", "transport", "mb", "ms"]


def _pick(folders: list[Path], rx: re.Pattern) -> Path | None:
    for folder in folders:
        try:
            names = sorted(p.name for p in folder.iterdir() if p.is_file() and rx.match(p.name))
        except OSError:
            continue
        if names:
            return folder / names[-1]
    return None


def files(out: Path) -> tuple[Path | None, Path | None]:
    """(communication.json, communication_matrix.json) of an output folder's collection."""
    folders = [out.parent / "analyze", out]
    return _pick(folders, _OPS_RE), _pick(folders, _MATRIX_RE)


def _read(path: Path | None, rank, diags: list):
    if path is None:
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        diags.append(
            dg.warning(
                "json-invalid",
                f"{path.name} is not valid JSON ({exc}): the communication analysis it holds is not read",
                file=path,
                fix=_FIX,
                rank=rank,
            )
        )
        return None
    if not isinstance(data, dict):
        diags.append(
            dg.warning(
                "json-invalid",
                f"{path.name} holds a JSON {type(data).__name__}, not the object of a communication analysis: not read",
                file=path,
                fix=_FIX,
                rank=rank,
            )
        )
        return None
    return data


def _stepped(data: dict) -> bool:
    return bool(data) and all(_STEP_RE.match(str(k)) for k in data)


def _step(key: str) -> int | None:
    m = _STEP_RE.match(key)
    return int(m.group(1)) if m and m.group(1) else None


def _category(name: str) -> str:
    return "p2p" if name.lower().startswith(_P2P) else "collective"


def op_rows(data: dict) -> list[dict]:
    """One row per op record (values as text), either shape."""
    rows = []
    if _stepped(data):
        for step_key, cats in data.items():
            for category, ops in (cats if isinstance(cats, dict) else {}).items():
                for key, rec in (ops if isinstance(ops, dict) else {}).items():
                    if "@" in key and isinstance(rec, dict):
                        rows.append(_op_row(_step(step_key), category, key, rec))
        return rows
    for key, rec in data.items():
        if "@" in key and isinstance(rec, dict):
            rows.append(_op_row(None, _category(key), key, rec))
    return rows


def link_rows(data: dict) -> list[tuple]:
    """One row per link record, either shape (the flat one names the op, not a summary)."""
    rows: list[tuple] = []
    if _stepped(data):
        for step_key, cats in data.items():
            for category, groups in (cats if isinstance(cats, dict) else {}).items():
                for key, links in (groups if isinstance(groups, dict) else {}).items():
                    rows.extend(_link_rows(_step(step_key), category, key, links if isinstance(links, dict) else {}))
        return rows
    for key, links in data.items():
        op, _, group = key.rpartition("@") if "@" in key else (key, "", None)
        m = re.match(r"^hcom_([A-Za-z0-9]+)_", op)
        op_type = (m.group(1) if m else op).lower()
        for row in _link_rows(None, _category(op), f"{op_type}@{group}", links if isinstance(links, dict) else {}):
            rows.append((*row[:3], None, *row[4:10], op))
    return rows


def _table(rows: list, cols: list[str], ints: tuple[str, ...]) -> pa.Table:
    get = (lambda r, i, c: r.get(c)) if rows and isinstance(rows[0], dict) else (lambda r, i, c: r[i])
    return pa.table(
        {
            c: pa.array([get(r, i, c) for r in rows], pa.int64() if c in ints else pa.string())
            for i, c in enumerate(cols)
        }
    )


def load(con, out: Path, shared: bool, off: str, rank, diags: list) -> bool:
    """Tables ``cj`` (op records) and ``links`` (link records) from the collection's files; False
    when there is none to apply.  ``shared``: several devices share the files."""
    ops_file, matrix_file = files(out)
    if ops_file is None and matrix_file is None:
        return False
    if shared:
        diags.append(
            dg.info(
                "msprof-comm-shared",
                f"{(ops_file or matrix_file).name} is the communication analysis of several devices and does not say "
                "which device an op ran on: its transit / wait times and bytes are not applied to any rank (the "
                "collectives themselves come from each device's timeline)",
                file=ops_file or matrix_file,
                fix="export each device's collection on its own to get its communication analysis",
                rank=rank,
            )
        )
        return False
    ops = _read(ops_file, rank, diags)
    matrix = _read(matrix_file, rank, diags)
    cj = _table(op_rows(ops or {}), _OP_COLS, ("step",))
    con.register("cj_arrow", cj)
    con.execute(f"""CREATE OR REPLACE TABLE cj AS SELECT * REPLACE (
        CASE WHEN ts_ns(start_us) > 1000000000000000000 THEN ts_ns(start_us) ELSE ts_ns(start_us) + {off} END
            AS start_us) FROM cj_arrow""")
    con.unregister("cj_arrow")
    links = _table(link_rows(matrix or {}), [*_LINK_COLS, "op_name"], ("step", "src_rank", "dst_rank"))
    con.register("links_arrow", links)
    con.execute("CREATE OR REPLACE TABLE links AS SELECT * FROM links_arrow")
    con.unregister("links_arrow")
    _report(con, ops_file, rank, diags)
    return True


def _report(con, path: Path | None, rank, diags: list) -> None:
    """Damaged figures of the op records: one warning per file (null, row kept)."""
    if path is None:
        return
    cond = " OR ".join(
        f"(ms_ns({c}) IS NULL AND clean({c}) IS NOT NULL)"
        for c in ("elapse_ms", "transit_ms", "wait_ms", "sync_ms", "idle_ms")
    )
    n = con.sql(f"SELECT count(*) FROM cj WHERE {cond}").fetchall()[0][0]
    if n:
        diags.append(
            dg.warning(
                "json-bad-values",
                f"{path.name}: {n} op record(s) hold times that are not usable numbers (negative, not finite or "
                "text): those times are null, the ops kept",
                file=path,
                fix=_FIX,
                rank=rank,
            )
        )


def comm_ops_sql() -> str:
    """``comm_ops`` over ``dt_steps`` (the timeline's collectives, with steps) and ``cj``."""
    per_tr = ", ".join(
        f"mb_bytes(j.{t}_mb) AS {t}_bytes, ms_ns(j.{t}_ms) AS {t}_transit_ns" for t in (x.lower() for x in TRANSPORTS)
    )
    return f"""WITH kc AS (
            SELECT device, step, name, type, category, start_ns, dur_ns,
                   row_number() OVER (PARTITION BY name ORDER BY start_ns) AS occ
            FROM ({{ops}})),
        j AS (SELECT *, row_number() OVER (PARTITION BY name ORDER BY step NULLS FIRST, start_us) AS occ FROM cj)
        SELECT coalesce(kc.device, {{device}}) AS device, coalesce(kc.step, j.step) AS step,
               coalesce(kc.name, j.name) AS name, kc.type, coalesce(j.category, kc.category) AS category,
               j."group" AS "group", coalesce(kc.start_ns, j.start_us) AS start_ns,
               coalesce(kc.dur_ns, ms_ns(j.elapse_ms)) AS dur_ns,
               ms_ns(j.transit_ms) AS transit_ns, ms_ns(j.wait_ms) AS wait_ns, ms_ns(j.sync_ms) AS sync_ns,
               ms_ns(j.idle_ms) AS idle_ns,
               CASE WHEN j.name IS NOT NULL THEN coalesce(mb_bytes(j.rdma_mb), 0) + coalesce(mb_bytes(j.hccs_mb), 0)
                    + coalesce(mb_bytes(j.pcie_mb), 0) + coalesce(mb_bytes(j.sio_mb), 0) END AS bytes,
               {per_tr}
        FROM kc FULL OUTER JOIN j ON j.name = kc.name AND j.occ = kc.occ
        ORDER BY start_ns"""


def links_sql() -> str:
    """``comm_links``; msprof's flat per-op links also give a ``total`` row per link (the sum over
    the ops, as torch_npu's summary writes it), which the matrix views read by default."""
    return """WITH l AS (SELECT step, category, op_type, summary, "group", src_rank, dst_rank, transport,
                            mb_bytes(mb) AS bytes, ms_ns(ms) AS transit_ns, op_name FROM links)
              SELECT * FROM l
              UNION ALL
              SELECT NULL, category, op_type, 'total', "group", src_rank, dst_rank, transport,
                     sum(bytes), sum(transit_ns), NULL
              FROM l WHERE summary IS NULL AND step IS NULL GROUP BY ALL
              ORDER BY step NULLS FIRST, src_rank, dst_rank, summary NULLS FIRST"""
