"""A seeded, reproducible mutation campaign over the real fixtures: each case copies one real
profile (an Ascend text rank, a torch_npu DB rank, an msprof DB, a Kineto trace), damages it in
one way (truncation, a deleted file, column or table, a wrong type, a non-finite or huge number,
non-UTF-8 bytes, duplicated events or rows, reordered events, a negative duration, a swapped start
and end), loads it
through the importer that recognises it, and judges the result against the undamaged load:

* no uncaught exception and no hang (each load runs under an alarm);
* where the mutation damages data, at least one diagnostic that the undamaged load does not
  have, naming the damaged file (an undamaged Level0 export already has missing-file
  diagnostics: those do not count);
* every table the damaged file does not feed is exactly equal to the undamaged load's -- a
  damaged value never costs the rank;
* a mutation that damages nothing (events written in another order) changes no table's content:
  the same rows, whatever their order and the ids numbered from it;
* broken JSON in an event array (a key unquoted, or an event's end cut off so that the next one
  follows a bare ``, {``) costs no table more rows than events were broken, besides the launch
  links that went with the lost host ops, API calls and device tasks.

``tests/importers/test_fuzz.py`` runs a CI-sized campaign; ``benchmarks/fuzz.py`` the long one.
Case ``i`` of seed ``s`` is always the same damage: ``case(s, i)``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import shutil
import signal
import sqlite3
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import profinsight
from profinsight.errors import ProfileError
from profinsight.importers import base, importers, load_rank

DEVICE = frozenset({"device_tasks", "steps", "launches", "host_ops", "comm_ops", "comm_links", "api_calls"})
MEMORY = frozenset({"memory_samples", "memory_blocks", "module_memory"})
ANY = None  #: a mutation whose damage may reach every table (a truncated or deleted file)

SEEDS = {
    "text": ("ascend_pt", "text_level1", "rank0_ascend_pt"),
    "db": ("ascend_pt", "db_level0", "rank0_ascend_pt"),
    "msprof_db": ("msprof", "msprof_db", "msprof_0.db"),
    "kineto": ("kineto", "compare_base.json.gz"),
    "msprof": ("msprof", "prof_timeline_2023", "PROF_000001_20230818142704322_COJGGGCANRMICFBC"),
}
OUT = "ASCEND_PROFILER_OUTPUT"
DB_FILE = f"{OUT}/ascend_pytorch_profiler_0.db"
BAD_NUMBERS = ("abc", "1e400", "inf", "-inf", "nan", "-1e30", "1e308", "-5")
INT64_MAX = 2**63 - 1


@dataclass
class Mutation:
    """What one case did: its class, in words, the damaged file's name, whether it damages data
    (and so must be said), and which tables it may change (None: any)."""

    cls: str
    detail: str
    file: str
    damaging: bool = True
    affects: frozenset[str] | None = ANY
    #: the tables are compared as sets of rows without the ids numbered in reading order
    order_free: bool = False
    #: the most rows any table may lose (damage that costs the events it hit, nothing after them)
    most_lost: int | None = None


@dataclass
class Verdict:
    case: str
    mutation: Mutation
    crash: str | None = None
    hang: bool = False
    silent: bool = False
    changed: list[str] = field(default_factory=list)  # tables it may not change, changed
    lost_rank: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.crash or self.hang or self.silent or self.changed or self.lost_rank)


# --- loading --------------------------------------------------------------------------------
def recognise(path: Path) -> base.RankSource | None:
    """The rank source the first importer that reads ``path`` makes of it, else None."""
    for imp in importers():
        if (imp.shape == "file") != path.is_file():
            continue
        found = imp.recognise(path)
        if found is not None and found.source is not None:
            return found.source
    return None


@dataclass
class Refused:
    """No importer takes the damaged input: what ``profinsight.load`` says instead."""

    error: ProfileError
    diagnostics: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def load(path: Path, timeout_s: int = 120):
    """The rank the importers make of ``path`` (None where nothing recognises it)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout_s)
    try:
        source = recognise(path)
        if source is None and path.is_dir():  # a collection whose device folders are its ranks
            found = [recognise(d) for d in sorted(path.glob("device_*"))]
            source = next((f for f in found if f is not None), None)
        if source is not None:
            return load_rank(source)
        try:
            profinsight.load(path)
        except ProfileError as exc:
            return Refused(exc)
        raise AssertionError(f"no importer recognises {path}, yet profinsight.load read it")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# --- helpers --------------------------------------------------------------------------------
def _csv_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write_csv(path: Path, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


def _sql(db: Path, *statements: str, params=None) -> None:
    con = sqlite3.connect(db)
    try:
        for s in statements:
            con.execute(s, params or ())
        con.commit()
    finally:
        con.close()


def _query(db: Path, sql: str) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _truncate(path: Path, rng: random.Random) -> str:
    """Cut ``path`` inside a line: a text file cut right after a line break cannot be told from
    a shorter one (nothing is damaged that could be said), so the cut never lands there."""
    data = path.read_bytes()
    cut = int(len(data) * rng.uniform(0.05, 0.95))
    while cut > 1 and data[cut - 1 : cut] in (b"\n", b"\r"):
        cut -= 1
    path.write_bytes(data[:cut])
    return f"cut at byte {cut} of {len(data)}"


# --- Ascend text ----------------------------------------------------------------------------
#: the files the text importer reads, and the tables each feeds (step_trace_time.csv is read only
#: where no file holds a device task, so damage to it changes nothing here)
TEXT_FEEDS = {
    # a kernel row decides which trace_view slice is a device task: the slice of a dropped row stays
    # on the timeline as a plain trace slice (seed 1 case 164: an HCCL op row with bytes ff fe)
    "kernel_details.csv": DEVICE | {"counters", "trace_slices"},
    "trace_view.json": DEVICE | {"counters", "trace_slices"},
    "memory_record.csv": MEMORY,
    "npu_module_mem.csv": MEMORY,
    "operator_memory.csv": MEMORY,
    "operator_details.csv": frozenset({"host_ops"}),
    "communication.json": frozenset({"comm_ops", "comm_links", "device_tasks"}),
    "communication_matrix.json": frozenset({"comm_links"}),
    "l2_cache.csv": frozenset({"device_tasks"}),
}
NUMERIC = {
    "kernel_details.csv": ("Duration(us)", "Start Time(us)", "Block Dim"),
    "memory_record.csv": ("Total Reserved(MB)", "Total Allocated(MB)", "Timestamp(us)"),
    "npu_module_mem.csv": ("Total Reserved(MB)", "Timestamp(us)"),
    "operator_memory.csv": ("Size(KB)", "Allocation Time(us)", "Release Time(us)"),
}


def text_truncate(rng, root: Path) -> Mutation:
    name = rng.choice(sorted(TEXT_FEEDS))
    detail = _truncate(root / OUT / name, rng)
    return Mutation("text.truncate", f"{name} {detail}", name)


#: files whose absence cannot be told from "not collected": nothing records that they were
#: (l2_cache.csv is written only with the l2_cache switch, which profiler_info does not keep)
UNTELLABLE = ("l2_cache.csv",)


def text_delete(rng, root: Path) -> Mutation:
    name = rng.choice(sorted(TEXT_FEEDS))
    (root / OUT / name).unlink()
    return Mutation("text.delete", f"{name} deleted", name, name not in UNTELLABLE)


def text_csv_value(rng, root: Path) -> Mutation:
    name = rng.choice(sorted(NUMERIC))
    path = root / OUT / name
    rows = _csv_rows(path)
    column = rng.choice([c for c in NUMERIC[name] if c in rows[0]])
    col = rows[0].index(column)
    filled = [i for i in range(1, len(rows)) if rows[i][col].strip() not in ("", "N/A")]
    hit = rng.sample(filled, min(len(filled), rng.randint(1, 3)))
    value = rng.choice(BAD_NUMBERS)
    for i in hit:
        rows[i][col] = value
    _write_csv(path, rows)
    return Mutation(
        "text.csv_value", f"{name} {column!r} = {value!r} in rows {sorted(hit)}", name, True, TEXT_FEEDS[name]
    )


def text_csv_duplicate(rng, root: Path) -> Mutation:
    """Rows of kernel_details.csv written twice (a merge of two exports, a copy-paste)."""
    path = root / OUT / "kernel_details.csv"
    rows = _csv_rows(path)
    picked = rng.sample(range(1, len(rows)), rng.randint(1, 3))
    for i in sorted(picked, reverse=True):
        rows.insert(i + 1, list(rows[i]))
    _write_csv(path, rows)
    return Mutation("text.csv_duplicate", f"{path.name} rows {sorted(picked)} written twice", path.name, True, DEVICE)


def _shuffled(rng, events: list) -> list:
    """The events in another order: the metadata ones (process / thread names) stay first, as
    every writer puts them before or among the events they name."""
    meta = [e for e in events if isinstance(e, dict) and e.get("ph") == "M"]
    rest = [e for e in events if not (isinstance(e, dict) and e.get("ph") == "M")]
    rng.shuffle(rest)
    return meta + rest


def text_reorder(rng, root: Path) -> Mutation:
    path = root / OUT / "trace_view.json"
    events = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(_shuffled(rng, events)), encoding="utf-8")
    return Mutation("text.reorder", f"{path.name}: {len(events)} events shuffled", path.name, False, order_free=True)


def text_non_utf8(rng, root: Path) -> Mutation:
    name = rng.choice(("kernel_details.csv", "operator_memory.csv"))
    path = root / OUT / name
    lines = path.read_bytes().split(b"\n")
    i = rng.randrange(1, len(lines) - 1)
    lines[i] = lines[i].replace(b",", b"\xff\xfe,", 1)
    path.write_bytes(b"\n".join(lines))
    return Mutation("text.non_utf8", f"{name} line {i + 1}: bytes ff fe", name, True, TEXT_FEEDS[name])


def _trace_damage(rng) -> tuple[str, Callable]:
    kinds = {
        "ts='abc'": lambda ev, e: e.__setitem__("ts", "abc"),
        "ts=Infinity": lambda ev, e: e.__setitem__("ts", float("inf")),
        "ts=-1e30": lambda ev, e: e.__setitem__("ts", -1e30),
        "ts missing": lambda ev, e: e.pop("ts"),
        "dur=-5": lambda ev, e: e.__setitem__("dur", -5.0),
        "dur=NaN": lambda ev, e: e.__setitem__("dur", float("nan")),
        "pid missing": lambda ev, e: e.pop("pid"),
        "ph='Q'": lambda ev, e: e.__setitem__("ph", "Q"),
        "duplicated": lambda ev, e: ev.append(dict(e)),
    }
    key = rng.choice(sorted(kinds))
    return key, kinds[key]


def _host_events(events: list) -> list:
    return [
        e
        for e in events
        if isinstance(e, dict)
        and e.get("ph") == "X"
        and e.get("cat") in ("cpu_op", "kernel", "cuda_runtime")
        and not str(e.get("name", "")).startswith("ProfilerStep")
    ]


def text_trace_event(rng, root: Path) -> Mutation:
    path = root / OUT / "trace_view.json"
    events = json.loads(path.read_text(encoding="utf-8"))
    key, change = _trace_damage(rng)
    hit = rng.sample(_host_events(events), rng.randint(1, 3))
    for e in hit:
        change(events, e)
    path.write_text(json.dumps(events), encoding="utf-8")
    return Mutation("text.trace_event", f"{len(hit)} cpu_op event(s): {key}", path.name, True, TEXT_FEEDS[path.name])


def _break_json(text: str, events: list[dict], lose_end: bool = False) -> str:
    """``text`` (``json.dumps`` of an array holding ``events``) with each of ``events`` made
    invalid JSON in place -- its first key loses its quotes, or (``lose_end``) its last quarter
    is cut out, closing braces and all, so the next event follows a bare ``, {`` -- as a bad copy
    or a stray edit leaves a file: no parser reads the array any more."""
    for e in events:
        one = json.dumps(e)
        key = json.dumps(next(iter(e)))
        at = text.index(one)
        broken = one[: len(one) - max(2, len(one) // 4)] if lose_end else one.replace(key, key.strip('"'), 1)
        text = text[:at] + broken + text[at + len(one) :]
    return text


def _broken_events(cls: str, rng, path: Path, pick: Callable, feeds: frozenset) -> Mutation:
    """1-3 of the events ``pick`` chooses in the array file ``path`` broken as JSON; no table may
    lose more than two rows for each (a kernel has two launch links)."""
    events = json.loads(path.read_text(encoding="utf-8"))
    hit = rng.sample(pick(events), rng.randint(1, 3))
    lose_end = rng.random() < 0.5
    path.write_text(_break_json(json.dumps(events), hit, lose_end), encoding="utf-8")
    how = "end lost" if lose_end else "a key unquoted"
    return Mutation(
        cls, f"{path.name}: {len(hit)} event(s) broken JSON ({how})", path.name, True, feeds, most_lost=len(hit)
    )


def text_trace_syntax(rng, root: Path) -> Mutation:
    path = root / OUT / "trace_view.json"
    return _broken_events("text.trace_syntax", rng, path, _host_events, TEXT_FEEDS[path.name])


#: lines a damaged CSV can hold that no header fits: too few cells, too many, an LF line in a CRLF
#: file, a stray quote
GARBAGE_LINES = (b"garbage,,\n", b"1,2\r\n", b"x" * 40 + b"," * 80 + b"\r\n", b'"unclosed,1,2\r\n')


def text_csv_lines(rng, root: Path) -> Mutation:
    """1-3 lines of garbage inserted among a CSV's rows (or appended)."""
    name = rng.choice(sorted(NUMERIC))
    path = root / OUT / name
    lines = path.read_bytes().splitlines(keepends=True)
    picked = sorted(rng.sample(range(1, len(lines) + 1), rng.randint(1, 3)), reverse=True)
    for i in picked:
        lines.insert(i, rng.choice(GARBAGE_LINES))
    path.write_bytes(b"".join(lines))
    return Mutation("text.csv_lines", f"{name}: garbage lines at {sorted(picked)}", name, True, TEXT_FEEDS[name])


def text_meta(rng, root: Path) -> Mutation:
    path = root / "profiler_info_0.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    key, value = rng.choice([("rank_id", 10**30), ("rank_id", "zero"), ("config", [1, 2]), ("rank_id", -7)])
    doc[key] = value
    path.write_text(json.dumps(doc), encoding="utf-8")
    return Mutation("text.meta", f"{path.name} {key} = {value!r}", path.name, True, frozenset({"run_info"}))


# --- DB -------------------------------------------------------------------------------------
DB_FEEDS = {
    **{t: DEVICE | {"run_info", "trace_slices"} for t in ("TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO")},
    **{t: DEVICE | {"run_info"} for t in ("COMMUNICATION_OP", "CANN_API", "PYTORCH_API", "CONNECTION_IDS")},
    **{t: DEVICE for t in ("PYTORCH_CALLCHAINS", "STEP_TIME", "MEMCPY_INFO", "TASK_PMU_INFO")},
    **{t: MEMORY for t in ("MEMORY_RECORD", "OP_MEMORY", "NPU_MODULE_MEM", "NPU_OP_MEM")},
    "NPU_MEM": MEMORY | {"counters"},
    **{t: frozenset({"counters"}) for t in ("AICORE_FREQ", "HBM", "LLC", "ACC_PMU", "SOC_BANDWIDTH_LEVEL")},
    **{t: frozenset({"run_info"}) for t in ("SESSION_TIME_INFO", "META_DATA", "NPU_INFO", "HOST_INFO")},
}
#: tables whose loss the importer says: always, or where the rest of the DB shows they were collected
#: (the others may simply not have been collected)
DB_SAID_MISSING = ("TASK", "STRING_IDS", "CANN_API", "PYTORCH_API", "COMMUNICATION_OP", "CONNECTION_IDS")
DB_SAID_MISSING += ("MEMORY_RECORD", "OP_MEMORY", "NPU_MODULE_MEM")


def _db(root: Path) -> Path:
    return root if root.is_file() else root / DB_FILE


def _tables(db: Path) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for (t,) in _query(db, "SELECT name FROM sqlite_master WHERE type = 'table'"):
        if t in DB_FEEDS and _query(db, f'SELECT count(*) FROM "{t}"')[0][0]:
            # an INTEGER PRIMARY KEY holds integers only (SQLite refuses anything else): left alone
            out[t] = [(r[1], r[2]) for r in _query(db, f'PRAGMA table_info("{t}")') if not r[5]]
    return out


def _times(cols) -> list[str]:
    return [c for c, _ in cols if c.lower() in ("startns", "endns", "timestampns", "timestamp")]


def db_bad_value(rng, root: Path) -> Mutation:
    db = _db(root)
    tables = _tables(db)
    choices = [
        (t, c) for t, cols in tables.items() for c, typ in cols if "INT" in typ.upper() and c not in _times(cols)
    ]
    table, column = rng.choice(sorted(choices))
    value = rng.choice(["abc", 1.5, "", "NaNx"])
    n = rng.randint(1, 3)
    _sql(
        db,
        f'UPDATE "{table}" SET "{column}" = ? WHERE rowid IN (SELECT rowid FROM "{table}" LIMIT {n})',
        params=(value,),
    )
    return Mutation("db.bad_value", f"{table}.{column} = {value!r} in {n} row(s)", db.name, True, DB_FEEDS[table])


def db_bad_time(rng, root: Path) -> Mutation:
    db = _db(root)
    tables = {t: _times(cols) for t, cols in _tables(db).items() if _times(cols)}
    table = rng.choice(sorted(tables))
    column = rng.choice(tables[table])
    value = rng.choice(["abc", float("nan"), INT64_MAX, -5, 1e300])
    n = rng.randint(1, 3)
    _sql(
        db,
        f'UPDATE "{table}" SET "{column}" = ? WHERE rowid IN (SELECT rowid FROM "{table}" LIMIT {n})',
        params=(value,),
    )
    return Mutation("db.bad_time", f"{table}.{column} = {value!r} in {n} row(s)", db.name, True, DB_FEEDS[table])


def db_swap(rng, root: Path) -> Mutation:
    db = _db(root)
    tables = [t for t, cols in _tables(db).items() if {"startNs", "endNs"} <= {c for c, _ in cols}]
    table = rng.choice(sorted(tables))
    n = rng.randint(1, 3)
    _sql(
        db,
        f'UPDATE "{table}" SET startNs = endNs, endNs = startNs WHERE rowid IN '
        f'(SELECT rowid FROM "{table}" WHERE CAST(endNs AS INTEGER) > CAST(startNs AS INTEGER) LIMIT {n})',
    )
    return Mutation("db.swap", f"{table}: start and end swapped in {n} row(s)", db.name, True, DB_FEEDS[table])


def db_drop_column(rng, root: Path) -> Mutation:
    from profinsight.importers.ascend_db.damage import EXPECTED

    db = _db(root)
    tables = _tables(db)
    choices = [(t, c) for t, cols in tables.items() for c, _ in cols if c in EXPECTED.get(t, ()) and t != "STRING_IDS"]
    rng.shuffle(choices)
    for table, column in choices:
        try:
            _sql(db, f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
        except sqlite3.OperationalError:  # a key column: SQLite will not drop it
            continue
        return Mutation("db.drop_column", f"{table}.{column} dropped", db.name, True, DB_FEEDS[table])
    raise AssertionError("no column could be dropped")


def db_drop_table(rng, root: Path) -> Mutation:
    db = _db(root)
    table = rng.choice(sorted(_tables(db)))
    _sql(db, f'DROP TABLE "{table}"')
    return Mutation("db.drop_table", f"{table} dropped", db.name, table in DB_SAID_MISSING, DB_FEEDS[table])


def db_empty_table(rng, root: Path) -> Mutation:
    """Every row of one table deleted (the table itself left)."""
    db = _db(root)
    table = rng.choice(sorted(_tables(db)))
    _sql(db, f'DELETE FROM "{table}"')
    return Mutation("db.empty_table", f"{table} emptied", db.name, table in DB_SAID_MISSING, DB_FEEDS[table])


def db_strings(rng, root: Path) -> Mutation:
    db = _db(root)
    n = rng.randint(1, 20)
    _sql(db, f"DELETE FROM STRING_IDS WHERE id IN (SELECT name FROM CANN_API ORDER BY random() LIMIT {n})")
    return Mutation("db.string_ids", f"{n} name(s) of CANN_API deleted from STRING_IDS", db.name, True, ANY)


def db_truncate(rng, root: Path) -> Mutation:
    db = _db(root)
    return Mutation("db.truncate", _truncate(db, rng), db.name)


# --- Kineto ---------------------------------------------------------------------------------
def _kineto_doc(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _kineto_write(path: Path, doc: dict) -> None:
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))


def kineto_event(rng, root: Path) -> Mutation:
    doc = _kineto_doc(root)
    key, change = _trace_damage(rng)
    hit = rng.sample(_host_events(doc["traceEvents"]), rng.randint(1, 3))
    for e in hit:
        change(doc["traceEvents"], e)
    _kineto_write(root, doc)
    # run_info too: a Kineto trace's capture window is that of its events
    feeds = DEVICE | {"counters", "trace_slices", "run_info"}
    return Mutation("kineto.event", f"{len(hit)} event(s): {key}", root.name, True, feeds)


def kineto_syntax(rng, root: Path) -> Mutation:
    doc = _kineto_doc(root)
    hit = rng.sample(_host_events(doc["traceEvents"]), rng.randint(1, 3))
    lose_end = rng.random() < 0.5
    root.write_bytes(gzip.compress(_break_json(json.dumps(doc), hit, lose_end).encode()))
    feeds = DEVICE | {"counters", "trace_slices", "run_info"}
    how = "end lost" if lose_end else "a key unquoted"
    return Mutation(
        "kineto.syntax", f"{len(hit)} event(s) broken JSON ({how})", root.name, True, feeds, most_lost=len(hit)
    )


def kineto_reorder(rng, root: Path) -> Mutation:
    doc = _kineto_doc(root)
    doc["traceEvents"] = _shuffled(rng, doc["traceEvents"])
    _kineto_write(root, doc)
    return Mutation("kineto.reorder", f"{len(doc['traceEvents'])} events shuffled", root.name, False, order_free=True)


def kineto_truncate(rng, root: Path) -> Mutation:
    text = gzip.decompress(root.read_bytes())
    cut = int(len(text) * rng.uniform(0.05, 0.95))
    root.write_bytes(gzip.compress(text[:cut]))
    return Mutation("kineto.truncate", f"JSON cut at byte {cut} of {len(text)}", root.name)


def kineto_meta(rng, root: Path) -> Mutation:
    doc = _kineto_doc(root)
    key = rng.choice(("rank", "world_size"))
    value = rng.choice((10**30, -3, "two"))
    doc.setdefault("distributedInfo", {})[key] = value
    _kineto_write(root, doc)
    return Mutation("kineto.meta", f"distributedInfo.{key} = {value!r}", root.name, True, frozenset({"run_info"}))


# --- msprof collection ------------------------------------------------------------------------
def _msprof_timeline(rng, root: Path) -> Path:
    files = sorted((root / "device_0" / "timeline").glob("msprof_*.json"))
    return rng.choice(files)


def msprof_event(rng, root: Path) -> Mutation:
    """1-3 hardware tasks of one iteration's timeline damaged as a trace event can be."""
    path = _msprof_timeline(rng, root)
    events = json.loads(path.read_text(encoding="utf-8"))
    key, change = _trace_damage(rng)
    tasks = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "Task Type" in (e.get("args") or {})]
    hit = rng.sample(tasks, rng.randint(1, 3))
    for e in hit:
        change(events, e)
    path.write_text(json.dumps(events), encoding="utf-8")
    return Mutation(
        "msprof.event", f"{path.name}: {len(hit)} hardware task(s): {key}", path.name, True, DEVICE | {"trace_slices"}
    )


def msprof_syntax(rng, root: Path) -> Mutation:
    """1-3 hardware tasks of one iteration's timeline broken as JSON (the file no longer parses)."""

    def tasks(events: list) -> list:
        return [
            e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "Task Type" in (e.get("args") or {})
        ]

    return _broken_events("msprof.syntax", rng, _msprof_timeline(rng, root), tasks, DEVICE | {"trace_slices"})


def msprof_truncate(rng, root: Path) -> Mutation:
    path = _msprof_timeline(rng, root)
    return Mutation("msprof.truncate", f"{path.name} {_truncate(path, rng)}", path.name)


CLASSES: dict[str, tuple[str, Callable]] = {
    "text.truncate": ("text", text_truncate),
    "text.delete": ("text", text_delete),
    "text.csv_value": ("text", text_csv_value),
    "text.non_utf8": ("text", text_non_utf8),
    "text.csv_duplicate": ("text", text_csv_duplicate),
    "text.reorder": ("text", text_reorder),
    "text.trace_event": ("text", text_trace_event),
    "text.meta": ("text", text_meta),
    "db.bad_value": ("db", db_bad_value),
    "db.bad_time": ("db", db_bad_time),
    "db.swap": ("db", db_swap),
    "db.drop_column": ("db", db_drop_column),
    "db.drop_table": ("db", db_drop_table),
    "db.empty_table": ("db", db_empty_table),
    "db.string_ids": ("db", db_strings),
    "db.truncate": ("db", db_truncate),
    "msprof_db.bad_time": ("msprof_db", db_bad_time),
    "msprof_db.bad_value": ("msprof_db", db_bad_value),
    "kineto.event": ("kineto", kineto_event),
    "kineto.truncate": ("kineto", kineto_truncate),
    "kineto.reorder": ("kineto", kineto_reorder),
    "msprof.event": ("msprof", msprof_event),
    "msprof.truncate": ("msprof", msprof_truncate),
    "kineto.meta": ("kineto", kineto_meta),
    "text.trace_syntax": ("text", text_trace_syntax),
    "text.csv_lines": ("text", text_csv_lines),
    "kineto.syntax": ("kineto", kineto_syntax),
    "msprof.syntax": ("msprof", msprof_syntax),
}


def case(seed: int, i: int) -> tuple[str, str]:
    """(case id, mutation class) of case ``i`` of ``seed``: the classes in turn, so any run of
    at least ``len(CLASSES)`` cases covers each."""
    names = sorted(CLASSES)
    return f"s{seed}-{i}", names[i % len(names)]


# --- one case -------------------------------------------------------------------------------
def copy_seed(fixtures: Path, kind: str, work: Path) -> Path:
    src = fixtures.joinpath(*SEEDS[kind])
    dst = work / src.name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copyfile(src, dst)
    return dst


def _names_file(d, name: str) -> bool:
    return (d.file is not None and (Path(d.file).name == name or name in d.file)) or name in (d.message or "")


def judge(case_id: str, mutation: Mutation, rd, before, seconds: float = 0.0) -> Verdict:
    v = Verdict(case_id, mutation, seconds=seconds)
    old = {(d.code, d.message) for d in before.diagnostics}
    new = [d for d in rd.diagnostics if (d.code, d.message) not in old]
    if mutation.damaging and not any(_names_file(d, mutation.file) for d in new):
        v.silent = True
    if mutation.order_free:
        v.changed = [n for n, t in before.tables.items() if not _same_rows(t, rd.tables.get(n))]
    elif mutation.affects is not None:
        for name, table in before.tables.items():
            if name in mutation.affects:
                continue
            got = rd.tables.get(name)
            # the copy lies elsewhere (its path differs); the has_* flags are derived from the other
            # tables, which are compared themselves
            drop = ["path"] + [c for c in table.column_names if c.startswith("has_")] if name == "run_info" else []
            if rd.rank != before.rank and "rank" in table.column_names:  # a damaged rank id: said, and unknown
                drop.append("rank")
            if drop and got is not None:
                table, got = table.drop_columns(drop), got.drop_columns([c for c in drop if c in got.column_names])
            same = got is not None and got.equals(table) if table.num_rows else got is None or got.num_rows == 0
            if not same:
                v.changed.append(name)
        v.lost_rank = bool(sum(t.num_rows for t in before.tables.values())) and not sum(
            t.num_rows for t in rd.tables.values()
        )
    if mutation.most_lost is not None:
        for name, table in before.tables.items():
            got = rd.tables.get(name)
            lost = table.num_rows - (got.num_rows if got is not None else 0)
            if name == "launches":  # an op that launched five tasks takes its five links with it
                lost -= _launches_of_lost_events(before, rd)
            if lost > mutation.most_lost:
                v.changed.append(f"{name} lost {lost} rows (at most {mutation.most_lost})")
    return v


def _launches_of_lost_events(before, rd) -> int:
    """Rows of ``before``'s launches whose host op, API call or device task ``rd`` lacks (matched
    by rank, name and start, each once): they go with the event that was lost, however many tasks
    it launched and however many links a task has, so only the launches lost besides them count
    against a mutation's ``most_lost``."""

    def missing(table: str, id_col: str) -> set:
        had, has = before.tables.get(table), rd.tables.get(table)
        if had is None or not had.num_rows:
            return set()
        cols = ("rank", "name", "start_ns")
        left = Counter(zip(*(has.column(c).to_pylist() for c in cols))) if has is not None else Counter()
        out = set()
        for rank, i, key in zip(
            had.column("rank").to_pylist(),
            had.column(id_col).to_pylist(),
            zip(*(had.column(c).to_pylist() for c in cols)),
        ):
            if left[key] > 0:
                left[key] -= 1
            else:
                out.add((rank, i))
        return out

    ops, calls, tasks = (
        missing("host_ops", "op_id"),
        missing("api_calls", "call_id"),
        missing("device_tasks", "task_uid"),
    )
    links = before.tables.get("launches")
    if links is None or not (ops or calls or tasks):
        return 0
    rows = zip(*(links.column(c).to_pylist() for c in ("rank", "host_op_id", "api_call_id", "task_uid")))
    return sum(1 for r, op, call, task in rows if (r, op) in ops or (r, call) in calls or (r, task) in tasks)


#: columns numbered in reading order (or pointing at such numbers): no content of their own
def _numbered(col: str) -> bool:
    return col.endswith(("_id", "_uid", "_idx")) or col in ("path", "idx", "flow_id")


def _same_rows(a, b) -> bool:
    """``a`` and ``b`` hold the same rows, in any order, once the numbered columns are left out."""
    if b is None:
        return a.num_rows == 0
    cols = [c for c in a.column_names if not _numbered(c)]
    if sorted(cols) != sorted(c for c in b.column_names if not _numbered(c)) or a.num_rows != b.num_rows:
        return False
    if not cols or not a.num_rows:
        return True
    key = [(c, "ascending") for c in cols]
    return a.select(cols).sort_by(key).equals(b.select(cols).sort_by(key))


def run_case(fixtures: Path, seed: int, i: int, work: Path, bases: dict, timeout_s: int = 120) -> Verdict:
    import time

    case_id, cls = case(seed, i)
    kind, mutate = CLASSES[cls]
    if kind not in bases:
        bases[kind] = load(fixtures.joinpath(*SEEDS[kind]), timeout_s)
    work.mkdir(parents=True, exist_ok=True)
    root = copy_seed(fixtures, kind, work)
    rng = random.Random(f"{seed}:{i}:{cls}")
    mutation = mutate(rng, root)
    mutation.cls = cls  # one function serves the DB and the msprof DB classes
    t0 = time.perf_counter()
    try:
        rd = load(root, timeout_s)
    except Hang:
        return Verdict(case_id, mutation, hang=True, seconds=time.perf_counter() - t0)
    except Exception:  # noqa: BLE001 - an uncaught exception is what the campaign looks for
        buf = io.StringIO()
        traceback.print_exc(file=buf)
        return Verdict(case_id, mutation, crash=buf.getvalue(), seconds=time.perf_counter() - t0)
    if isinstance(rd, Refused):  # nothing reads it: the refusal must name the file
        said = mutation.file in str(rd.error) or mutation.file in str(getattr(rd.error, "file", "") or "")
        return Verdict(case_id, mutation, silent=not said, seconds=time.perf_counter() - t0)
    return judge(case_id, mutation, rd, bases[kind], time.perf_counter() - t0)
