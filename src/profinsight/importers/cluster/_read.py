"""Read an msprof-analyze cluster summary -- the ``cluster_analysis_output/`` files or
``cluster_analysis.db`` -- into plain rows, one list per kind of record, for every rank at once.

Both forms hold the same records (reference 1.8):

- the step trace (``cluster_step_trace_time.csv`` / ``ClusterStepTraceTime``): per step one row
  per rank (``Type`` rank, ``Index`` the rank id) and one per pipeline stage (``Type`` stage,
  ``Index`` its rank set) with Computing, Communication(Not Overlapped), Overlapped,
  Communication, Free, Stage, Bubble, Communication(Not Overlapped and Exclude Receive), in us;
- per rank and communication op the time split (``Communication Time Info`` of
  ``cluster_communication.json`` / ``ClusterCommAnalyzerTime``, ms) and the bytes per link type
  (``Communication Bandwidth Info`` / ``ClusterCommAnalyzerBandwidth``, decimal MB and ms);
- the links (``cluster_communication_matrix.json`` / ``ClusterCommAnalyzerMatrix``);
- the communication groups (``communication_group.json`` / ``CommunicationGroup``).

``Total Op Info`` entries are the vendor's sums over the ops of a group: they are not ops and are
kept apart (``totals``), for reconciliation.  Numbers stay as written (floats); the unit
conversion is the tables' (:mod:`._tables`).
"""

from __future__ import annotations

import csv
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import orjson

STEP_CSV = "cluster_step_trace_time.csv"
COMM_JSON = "cluster_communication.json"
MATRIX_JSON = "cluster_communication_matrix.json"
GROUP_JSON = "communication_group.json"
FOLDER_FILES = (STEP_CSV, COMM_JSON, MATRIX_JSON, GROUP_JSON)
DB_TABLES = (
    "ClusterStepTraceTime",
    "ClusterCommAnalyzerTime",
    "ClusterCommAnalyzerBandwidth",
    "ClusterCommAnalyzerMatrix",
)
TOTAL = "Total Op Info"

#: the step-trace columns as the CSV names them -> as the DB names them -> the name used here
FIGURES = (
    ("Computing", "computing", "computing"),
    ("Communication(Not Overlapped)", "communication_not_overlapped", "cno"),
    ("Overlapped", "overlapped", "overlapped"),
    ("Communication", "communication", "communication"),
    ("Free", "free", "free"),
    ("Stage", "stage", "stage"),
    ("Bubble", "bubble", "bubble"),
    (
        "Communication(Not Overlapped and Exclude Receive)",
        "communication_not_overlapped_and_exclude_receive",
        "cno_excl",
    ),
)
_CSV_HEAD = "Step,Type,Index,Computing"
_STEP = re.compile(r"^(?:step)?(\d+)$")
_P2P = ("hcom_send", "hcom_receive", "hcom_batchsendrecv")


@dataclass
class Summary:
    """Every record of one cluster summary, all ranks (see the module doc)."""

    #: dicts: step, rank, and the figures (us floats, None when empty)
    ranks: list[dict] = field(default_factory=list)
    #: dicts: step, ranks (the stage's rank ids), and the figures
    stages: list[dict] = field(default_factory=list)
    #: dicts: rank, step, category, name, group, start_us, elapse_ms, transit_ms, wait_ms, sync_ms, idle_ms
    ops: list[dict] = field(default_factory=list)
    #: (rank, step, name) -> transport -> (size MB, time ms)
    bands: dict[tuple, dict[str, tuple]] = field(default_factory=dict)
    #: dicts as ``ops``, for the ``Total Op Info`` entries (group-level sums per rank)
    totals: list[dict] = field(default_factory=list)
    #: dicts: step, category, op_type, summary, group, src, dst, transport, size_mb, time_ms, op_name
    links: list[dict] = field(default_factory=list)
    #: {"collective": [[ranks]...], "p2p": [[ranks]...]}
    groups: dict[str, list] = field(default_factory=dict)
    #: (file, what is wrong) for files that could not be read
    problems: list[tuple[Path, str]] = field(default_factory=list)
    #: profiler_metadata.json without ENV_VARIABLES (the summary tier of a rank folder)
    metadata: dict = field(default_factory=dict)


def split(summary: Summary, only: int | None = None) -> dict[int, Summary]:
    """The records of each rank (``only``: of that rank alone, empty where it has none), in one
    pass over the summary: ``ranks``, ``ops``, ``totals`` and ``bands`` by their rank, ``links``
    by the rank that sends; ``stages``, ``groups``, ``problems`` and ``metadata`` are the job's
    and shared."""
    parts: dict[int, Summary] = {}

    def part(rank) -> Summary | None:
        if only is not None and rank != only:
            return None
        if rank not in parts:
            parts[rank] = Summary(
                stages=summary.stages, groups=summary.groups, problems=summary.problems, metadata=summary.metadata
            )
        return parts[rank]

    if only is not None:
        part(only)
    for kind in ("ranks", "ops", "totals"):
        for rec in getattr(summary, kind):
            if (p := part(rec["rank"])) is not None:
                getattr(p, kind).append(rec)
    for key, bands in summary.bands.items():
        if (p := part(key[0])) is not None:
            p.bands[key] = bands
    for link in summary.links:
        if (p := part(link["src"])) is not None:
            p.links.append(link)
    return parts


# -- recognising ----------------------------------------------------------------------------
def is_step_csv(path: Path) -> bool:
    """Whether ``path`` is a cluster step trace: its header, not its name, decides."""
    if path.suffix.lower() != ".csv":
        return False
    with open(path, "rb") as f:
        head = f.read(256).decode("utf-8-sig", "replace")
    return head.startswith(_CSV_HEAD)


def is_cluster_db(path: Path) -> bool:
    """Whether ``path`` is a SQLite file with msprof-analyze's cluster tables."""
    if path.suffix.lower() != ".db":
        return False
    with open(path, "rb") as f:
        if f.read(16) != b"SQLite format 3\x00":
            return False
    con = connect(path)
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()
    return "ClusterStepTraceTime" in names or "ClusterCommAnalyzerTime" in names


def is_comm_json(path: Path) -> bool:
    """A ``cluster_communication.json``: ``{group: {"step<N>": {op: {rank: {...}}}}}``."""
    if path.name != COMM_JSON:
        return False
    data = _json(path, [])
    return isinstance(data, dict) and any(
        isinstance(v, dict) and any(_STEP.match(str(k)) for k in v) for v in data.values()
    )


def connect(path: Path) -> sqlite3.Connection:
    """Read-only and immutable: never a -wal/-shm file beside the user's data."""
    return sqlite3.connect(f"{Path(path).resolve().as_uri()}?immutable=1", uri=True)


def rank_ids(summary: Summary) -> list[int]:
    """Every rank the summary knows: step-trace rows first, else communication records."""
    ranks = {r["rank"] for r in summary.ranks}
    if not ranks:
        ranks = {o["rank"] for o in summary.ops}
    return sorted(ranks)


def folder_ranks(folder: Path, step_csv: Path | None = None) -> list[int]:
    """The ranks of a summary folder, from the step trace alone where there is one (a few
    hundred lines; the communication JSON is parsed only when it is all there is)."""
    out = Summary()
    csv_path = step_csv or folder / STEP_CSV
    if csv_path.is_file():
        _step_csv(csv_path, out)
        return rank_ids(out)
    comm = _json(folder / COMM_JSON, [])
    if isinstance(comm, dict):
        _comm_json(comm, out)
    return rank_ids(out)


def db_ranks(path: Path) -> list[int]:
    """The ranks of a cluster DB: two small queries, no table read in full."""
    con = connect(path)
    try:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        ranks: set[int] = set()
        if "ClusterStepTraceTime" in have:
            q = "SELECT DISTINCT \"index\" FROM ClusterStepTraceTime WHERE lower(type) = 'rank'"
            ranks = {i for (v,) in con.execute(q) if (i := _int(v)) is not None}
        if not ranks and "ClusterCommAnalyzerTime" in have:
            ranks = {
                i
                for (v,) in con.execute("SELECT DISTINCT rank_id FROM ClusterCommAnalyzerTime")
                if (i := _int(v)) is not None
            }
    except sqlite3.Error:
        return []
    finally:
        con.close()
    return sorted(ranks)


# -- reading --------------------------------------------------------------------------------
def read_folder(folder: Path, step_csv: Path | None = None) -> Summary:
    """The summary of a ``cluster_analysis_output/`` folder (files that are absent stay empty);
    ``step_csv``: its step trace where it has another name."""
    out = Summary()
    csv_path = step_csv or folder / STEP_CSV
    if csv_path.is_file():
        _step_csv(csv_path, out)
    comm = _json(folder / COMM_JSON, out.problems)
    if isinstance(comm, dict):
        _comm_json(comm, out)
    matrix = _json(folder / MATRIX_JSON, out.problems)
    if isinstance(matrix, dict):
        _matrix_json(matrix, out)
    groups = _json(folder / GROUP_JSON, out.problems)
    if isinstance(groups, dict):
        out.groups = {str(k): v for k, v in groups.items() if isinstance(v, list)}
    return out


def read_db(path: Path, rank: int | None = None) -> Summary:
    """The summary of a ``cluster_analysis.db``, or (``rank`` given) of one rank's own
    ``analysis.db`` (the DB export of torch_npu: ``StepTraceTime``, ``CommAnalyzerTime``,
    ``CommAnalyzerBandwidth``, ``CommAnalyzerMatrix`` -- the cluster tables without the
    ``Cluster`` prefix and without a rank column, the step trace with Preparing)."""
    if rank is not None:
        return _read_rank_db(path, int(rank))
    out = Summary()
    try:
        con = connect(path)
    except sqlite3.Error as exc:
        out.problems.append((path, str(exc)))
        return out
    try:
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "ClusterStepTraceTime" in have:
            cols = ", ".join(f'"{db}"' for _, db, _ in FIGURES)
            for step, typ, index, *values in con.execute(
                f'SELECT step, type, "index", {cols} FROM ClusterStepTraceTime'
            ):
                _step_row(step, typ, index, values, out)
        if "ClusterCommAnalyzerTime" in have:
            for row in con.execute(
                "SELECT rank_id, step, hccl_op_name, group_name, start_timestamp, elapsed_time, transit_time, "
                "wait_time, synchronization_time, idle_time FROM ClusterCommAnalyzerTime"
            ):
                rank, step, name, group, start, elapse, transit, wait, sync, idle = row
                rec = {
                    "rank": _int(rank),
                    "step": step_of(step),
                    "category": category_of(name),
                    "name": name,
                    "group": group or None,
                    "start_us": start,
                    "elapse_ms": elapse,
                    "transit_ms": transit,
                    "wait_ms": wait,
                    "sync_ms": sync,
                    "idle_ms": idle,
                }
                (out.totals if name == TOTAL else out.ops).append(rec)
        if "ClusterCommAnalyzerBandwidth" in have:
            for rank, step, name, band, size, ms in con.execute(
                "SELECT rank_id, step, hccl_op_name, band_type, transit_size, transit_time FROM ClusterCommAnalyzerBandwidth"
            ):
                # the totals repeat on every packet-size row: the first row of each transport counts
                key = (_int(rank), step_of(step), name)
                out.bands.setdefault(key, {}).setdefault(str(band).upper(), (size, ms))
        if "ClusterCommAnalyzerMatrix" in have:
            rows = con.execute(
                "SELECT step, hccl_op_name, group_name, src_rank, dst_rank, transit_size, transit_time, "
                "transport_type, op_name FROM ClusterCommAnalyzerMatrix"
            )
            _matrix_rows(rows, out)
        if "CommunicationGroup" in have:
            for typ, ranks in con.execute("SELECT type, rank_set FROM CommunicationGroup"):
                out.groups.setdefault(str(typ), []).append(_rank_set(ranks))
    except sqlite3.Error as exc:
        out.problems.append((path, str(exc)))
    finally:
        con.close()
    return out


def _read_rank_db(path: Path, rank: int) -> Summary:
    out = Summary()
    try:
        con = connect(path)
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        out.problems.append((path, str(exc)))
        return out
    try:
        if "StepTraceTime" in have:
            cols = [c[1] for c in con.execute("PRAGMA table_info(StepTraceTime)")]
            figs = ", ".join(f'"{db}"' if db in cols else "NULL" for _, db, _ in FIGURES)
            prep = '"preparing"' if "preparing" in cols else "NULL"
            for step, *values, preparing in con.execute(f"SELECT step, {figs}, {prep} FROM StepTraceTime"):
                rec = {"rank": rank, "step": step_of(step), **{k: _float(v) for (_, _, k), v in zip(FIGURES, values)}}
                if "preparing" in cols:
                    rec["preparing"] = _float(preparing)
                out.ranks.append(rec)
        if "CommAnalyzerTime" in have:
            for step, name, group, start, elapse, transit, wait, sync, idle in con.execute(
                "SELECT step, hccl_op_name, group_name, start_timestamp, elapse_time, transit_time, wait_time, "
                "synchronization_time, idle_time FROM CommAnalyzerTime"
            ):
                rec = {
                    "rank": rank,
                    "step": step_of(step),
                    "category": category_of(name),
                    "name": name,
                    "group": group or None,
                    "start_us": start,
                    "elapse_ms": elapse,
                    "transit_ms": transit,
                    "wait_ms": wait,
                    "sync_ms": sync,
                    "idle_ms": idle,
                }
                (out.totals if name == TOTAL else out.ops).append(rec)
        if "CommAnalyzerBandwidth" in have:
            for step, name, band, size, ms in con.execute(
                "SELECT step, hccl_op_name, transport_type, transit_size, transit_time FROM CommAnalyzerBandwidth"
            ):  # the totals repeat on every packet-size row: the first row of each transport counts
                out.bands.setdefault((rank, step_of(step), name), {}).setdefault(str(band).upper(), (size, ms))
        if "CommAnalyzerMatrix" in have:
            rows = con.execute(
                "SELECT step, hccl_op_name, group_name, src_rank, dst_rank, transit_size, transit_time, "
                "transport_type, op_name FROM CommAnalyzerMatrix"
            )
            _matrix_rows(rows, out)
    except sqlite3.Error as exc:
        out.problems.append((path, str(exc)))
    finally:
        con.close()
    return out


def _matrix_rows(rows, out: Summary) -> None:
    """Matrix rows (step, key, group, src, dst, size MB, time ms, transport, op name) of either DB:
    the key is ``<op type>-<summary>`` (``allreduce-top1``)."""
    for step, key, group, src, dst, size, ms, transport, op_name in rows:
        if key == TOTAL:
            continue
        op_type, _, summary = str(key or "").rpartition("-")
        out.links.append(
            {
                "step": step_of(step),
                "category": "p2p" if op_type.lower() in ("send", "receive", "batchsendrecv") else "collective",
                "op_type": (op_type or str(key)).lower(),
                "summary": summary if op_type else None,
                "group": group or None,
                "src": _int(src),
                "dst": _int(dst),
                "transport": transport,
                "size_mb": size,
                "time_ms": ms,
                "op_name": op_name or None,
            }
        )


def csv_rows(path: Path, out: Summary) -> list[list[str]]:
    """The rows of a vendor CSV (BOM tolerated); an unreadable file is a problem of ``out`` and
    gives no rows."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append((path, str(exc)))
        return []


def _step_csv(path: Path, out: Summary) -> None:
    rows = csv_rows(path, out)
    if not rows:
        return
    head = [h.strip() for h in rows[0]]
    idx = {h: i for i, h in enumerate(head)}
    missing = [c for c in ("Step", "Type", "Index") if c not in idx]
    if missing:
        out.problems.append((path, f"no {', '.join(missing)} column"))
        return
    for row in rows[1:]:
        if len(row) < len(head):
            row = row + [""] * (len(head) - len(row))
        values = [row[idx[c]] if c in idx else None for c, _, _ in FIGURES]
        _step_row(row[idx["Step"]], row[idx["Type"]], row[idx["Index"]], values, out)


def _step_row(step, typ, index, values, out: Summary) -> None:
    rec = {"step": step_of(step), **{key: _float(v) for (_, _, key), v in zip(FIGURES, values)}}
    kind = str(typ or "").strip().lower()
    if kind == "rank" and _int(index) is not None:
        out.ranks.append({"rank": _int(index), **rec})
    elif kind == "stage":
        out.stages.append({"ranks": _rank_set(index), **rec})


def _comm_json(data: dict, out: Summary) -> None:
    """``{group: {"step<N>": {"op@hash" | "Total Op Info": {rank: {time info, bandwidth info}}}}}``."""
    for group_key, steps in data.items():
        category = "p2p" if group_key == "p2p" else "collective"
        for step_key, ops in (steps or {}).items():
            step = step_of(step_key)
            for key, per_rank in (ops or {}).items():
                name, _, group = str(key).rpartition("@") if "@" in str(key) else (str(key), "", None)
                for rank_key, rec in (per_rank or {}).items():
                    rank = _int(rank_key)
                    if rank is None or not isinstance(rec, dict):
                        continue
                    t = rec.get("Communication Time Info") or {}
                    row = {
                        "rank": rank,
                        "step": step,
                        "category": category,
                        "name": name,
                        "group": group or None,
                        "start_us": t.get("Start Timestamp(us)"),
                        "elapse_ms": t.get("Elapse Time(ms)"),
                        "transit_ms": t.get("Transit Time(ms)"),
                        "wait_ms": t.get("Wait Time(ms)"),
                        "sync_ms": t.get("Synchronization Time(ms)"),
                        "idle_ms": t.get("Idle Time(ms)"),
                    }
                    (out.totals if name == TOTAL else out.ops).append(row)
                    bands = {
                        str(tr).upper(): (b.get("Transit Size(MB)"), b.get("Transit Time(ms)"))
                        for tr, b in (rec.get("Communication Bandwidth Info") or {}).items()
                        if isinstance(b, dict)
                    }
                    if name != TOTAL:
                        out.bands[(rank, step, name)] = bands


def _matrix_json(data: dict, out: Summary) -> None:
    """``{group: {"step<N>": {"op@hash" | "<type>-<summary>@hash": {"src-dst": {...}}}}}``."""
    for group_key, steps in data.items():
        category = "p2p" if group_key == "p2p" else "collective"
        for step_key, ops in (steps or {}).items():
            step = step_of(step_key)
            for key, links in (ops or {}).items():
                if key == TOTAL:
                    continue
                head, _, group = str(key).rpartition("@") if "@" in str(key) else (str(key), "", None)
                m = re.match(r"^hcom_([A-Za-z0-9]+)_", head)
                if m:  # a concrete op: no summary row
                    op_type, summary, op_name = m.group(1).lower(), None, head
                else:
                    t, _, summary = head.rpartition("-")
                    op_type, summary, op_name = (t or head).lower(), (summary if t else None), None
                for link, rec in (links or {}).items():
                    src, _, dst = str(link).partition("-")
                    rec = rec if isinstance(rec, dict) else {}
                    out.links.append(
                        {
                            "step": step,
                            "category": category,
                            "op_type": op_type,
                            "summary": summary,
                            "group": group or None,
                            "src": _int(src),
                            "dst": _int(dst),
                            "transport": rec.get("Transport Type"),
                            "size_mb": rec.get("Transit Size(MB)"),
                            "time_ms": rec.get("Transit Time(ms)"),
                            "op_name": rec.get("Op Name") or op_name,
                        }
                    )


def _json(path: Path, problems: list):
    if not path.is_file():
        return None
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        problems.append((path, str(exc)))
        return None


def step_of(text) -> int | None:
    """``2``, ``"2"``, ``"step2"`` -> 2; empty -> None."""
    m = _STEP.match(str(text if text is not None else "").strip())
    return int(m.group(1)) if m else None


def category_of(name) -> str:
    return "p2p" if str(name or "").lower().startswith(_P2P) else "collective"


def _rank_set(text) -> list[int]:
    if isinstance(text, list):
        return [int(x) for x in text if _int(x) is not None]
    return [int(x) for x in re.findall(r"-?\d+", str(text or ""))]


def _int(value) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _float(value) -> float | None:
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None
