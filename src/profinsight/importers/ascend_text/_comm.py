"""``comm_ops`` and ``comm_links`` from communication.json / communication_matrix.json.

- Start and duration of an op come from its kernel_details HCCL row (exact ns); communication.json's
  ``Start Timestamp(us)`` is a float that lost sub-us precision and is used only for ops that
  kernel_details lacks.  Ops are matched by name (n-th occurrence to n-th occurrence).
- Times in ms -> ns (``ms_ns``); sizes in *decimal* MB -> bytes (``mb_bytes``).
- ``bytes`` = RDMA + HCCS + PCIE + SIO.  SDMA is left out: in every fixture op SDMA's size and time
  equal HCCS's (the SDMA entry aggregates the on-node copies that HCCS already counts), so adding
  it would double the on-node bytes.  ``sdma_bytes`` keeps the figure as written.
- At Level0 (no communication.json) comm_ops are the HCCL rows of kernel_details with null
  transit/wait/sync/idle/bytes.
- ``group`` is the numeric hash of the JSON key ``{op}@{group}``; without the JSON, the trace's
  HCCL group-lane name (``Group 0 Communication``).
"""

from __future__ import annotations

import re

import orjson
import pyarrow as pa

from . import _files as F

TRANSPORTS = ("RDMA", "HCCS", "PCIE", "SDMA", "SIO")
_STEP = re.compile(r"^step(\d+)$")
_P2P = (
    "(lower(name) LIKE 'hcom\\_send%' ESCAPE '\\' OR lower(name) LIKE 'hcom\\_receive%' ESCAPE '\\' "
    "OR lower(name) LIKE 'hcom\\_batchsendrecv%' ESCAPE '\\')"
)


def _step(key: str) -> int | None:
    m = _STEP.match(key or "")
    return int(m.group(1)) if m else None


def _read(inputs: F.Inputs, name: str, salvage: bool = False):
    """``name`` parsed (a dict), or None when absent or unreadable.  ``salvage``: a file that is not
    valid JSON (cut short, bytes overwritten) keeps every op record that still parses
    (:func:`_salvage_ops`), in the shape of the whole file."""
    if not inputs.path(name).is_file():
        return None
    raw = inputs.path(name).read_bytes()
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        kept, lost = _salvage_ops(raw) if salvage else ({}, 0)
        n = sum("@" in key for cats in kept.values() for ops in cats.values() for key in ops)
        inputs.add(
            "warning",
            "json-invalid",
            f"{name} is not valid JSON ({exc}); "
            + (
                f"the {n} op record(s) that parse were kept, {lost} could not be read."
                if n
                else "communication views from it are empty."
            ),
            inputs.path(name),
            "Re-export the profile or restore the file.",
        )
        return kept if n else None
    return data if isinstance(data, dict) else None


#: a key whose value is an object: ``"step50": {``, ``"collective": {``, ``"hcom_x@123": {``
_OBJECT_KEY = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:\s*\{')
_CATEGORIES = (b"collective", b"p2p")


def _salvage_ops(raw: bytes) -> tuple[dict, int]:
    """The op records of a communication.json that does not parse whole, as ``{step: {category:
    {op@group: record}}}``, and how many op records did not parse.

    The file nests three levels of objects -- steps, their categories, their ops (keys holding
    ``@``, beside them the aggregate "Total Op Info": records that open with "Communication ...")
    -- and an op's record holds objects of its own.  Each op's record runs from its ``{``
    to the next step, category or op key; what closes the enclosing objects (or a cut) is peeled
    off its end until it parses.  An op record that never parses is counted, not guessed at."""
    marks = []
    for m in _OBJECT_KEY.finditer(raw):
        key = m.group(1).decode("utf-8", "replace")
        if b"@" in m.group(1) or raw[m.end() : m.end() + 64].lstrip().startswith(b'"Communication'):
            kind = "op"  # an op's record, or the aggregate beside them ("Total Op Info")
        elif m.group(1) in _CATEGORIES:
            kind = "category"
        elif _STEP.match(key):
            kind = "step"
        else:
            continue  # an object inside a record
        marks.append((kind, key, m.end() - 1, m.start()))
    out: dict = {}
    lost = 0
    step = category = None
    for i, (kind, key, value_at, _) in enumerate(marks):
        if kind == "step":
            step, category = key, None
            continue
        if kind == "category":
            category = key
            continue
        end = marks[i + 1][3] if i + 1 < len(marks) else len(raw)
        rec = _parse_object(raw[value_at:end])
        if rec is None or step is None or category is None:
            lost += "@" in key
            continue
        out.setdefault(step, {}).setdefault(category, {})[key] = rec
    return out, lost


def _parse_object(text: bytes) -> dict | None:
    """The object that ``text`` starts with, when only separators and the braces that close
    enclosing objects follow it (at most three levels), else None."""
    text = text.rstrip(b" \t\r\n,")
    for _ in range(4):
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            if not text.endswith(b"}"):
                return None
            text = text[:-1].rstrip(b" \t\r\n,")
            continue
        return obj if isinstance(obj, dict) else None
    return None


def load_comm_json(con, inputs: F.Inputs) -> bool:
    """Create ``cj`` (one row per op of communication.json, values as text) and ``comm_groups``
    (op name -> group).  False when the file is absent or unreadable (tables are empty)."""
    data = _read(inputs, F.COMMUNICATION, salvage=True)
    rows = []
    for step_key, cats in (data or {}).items():
        for category, ops in (cats or {}).items():
            for key, rec in (ops or {}).items():
                if "@" in key and isinstance(rec, dict):
                    rows.append(_op_row(_step(step_key), category, key, rec))
    cols = [
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
    table = pa.table({c: pa.array([r.get(c) for r in rows], pa.int64() if c == "step" else pa.string()) for c in cols})
    con.register("cj_arrow", table)
    con.execute("CREATE OR REPLACE TABLE cj AS SELECT * FROM cj_arrow")
    con.unregister("cj_arrow")
    con.execute('CREATE OR REPLACE TABLE comm_groups AS SELECT name, min("group") AS "group" FROM cj GROUP BY name')
    return data is not None


def _op_row(step, category, key, rec) -> dict:
    name, group = key.rsplit("@", 1)
    t = rec.get("Communication Time Info") or {}
    bw = rec.get("Communication Bandwidth Info") or {}
    row = {
        "step": step,
        "category": category,
        "name": name,
        "group": group,
        "start_us": _text(t.get("Start Timestamp(us)")),
        "elapse_ms": _text(t.get("Elapse Time(ms)")),
        "transit_ms": _text(t.get("Transit Time(ms)")),
        "wait_ms": _text(t.get("Wait Time(ms)")),
        "sync_ms": _text(t.get("Synchronization Time(ms)")),
        "idle_ms": _text(t.get("Idle Time(ms)")),
    }
    for tr in TRANSPORTS:
        rec_t = bw.get(tr) or {}
        row[f"{tr.lower()}_mb"] = _text(rec_t.get("Transit Size(MB)"))
        row[f"{tr.lower()}_ms"] = _text(rec_t.get("Transit Time(ms)"))
    return row


def _text(v) -> str | None:
    return None if v is None else repr(v) if isinstance(v, float) else str(v)


def comm_ops_sql() -> str:
    """SELECT for ``comm_ops`` over ``device_tasks`` communication rows, ``cj`` and ``hccl_op``."""
    per_tr = ", ".join(
        f"mb_bytes(j.{t}_mb) AS {t}_bytes, ms_ns(j.{t}_ms) AS {t}_transit_ns" for t in (x.lower() for x in TRANSPORTS)
    )
    return f"""WITH kc AS (
            SELECT name, type, start_ns, dur_ns, step, device, "group", op_idx,
                   row_number() OVER (PARTITION BY name ORDER BY start_ns, task_uid) AS occ
            FROM device_tasks WHERE kind = 'communication'),
        j AS (SELECT *, row_number() OVER (PARTITION BY name ORDER BY step, TRY_CAST(start_us AS DOUBLE)) AS occ
              FROM cj),
        ops AS (SELECT name, min(idx) AS idx FROM hccl_op GROUP BY name)
        SELECT coalesce(kc.step, j.step) AS step, kc.device,
               coalesce(kc.name, j.name) AS name,
               coalesce(kc.type, regexp_extract(coalesce(kc.name, j.name), '^(hcom_[A-Za-z0-9]+_)', 1)) AS type,
               coalesce(j.category, CASE WHEN {_P2P.replace("name", "coalesce(kc.name, j.name)")} THEN 'p2p'
                                         ELSE 'collective' END) AS category,
               coalesce(j."group", kc."group") AS "group",
               coalesce(kc.start_ns, scaled_int(TRY_CAST(j.start_us AS DOUBLE), 1000)) AS start_ns,
               coalesce(kc.dur_ns, ms_ns(j.elapse_ms)) AS dur_ns,
               ms_ns(j.transit_ms) AS transit_ns, ms_ns(j.wait_ms) AS wait_ns, ms_ns(j.sync_ms) AS sync_ns,
               ms_ns(j.idle_ms) AS idle_ns,
               CASE WHEN j.name IS NOT NULL THEN coalesce(mb_bytes(j.rdma_mb), 0) + coalesce(mb_bytes(j.hccs_mb), 0)
                    + coalesce(mb_bytes(j.pcie_mb), 0) + coalesce(mb_bytes(j.sio_mb), 0) END AS bytes,
               {per_tr},
               o.data_type, o.count, o.algorithm
        FROM kc FULL OUTER JOIN j ON j.name = kc.name AND j.occ = kc.occ
        LEFT JOIN ops ON ops.name = coalesce(kc.name, j.name)
        LEFT JOIN hccl_op o ON o.idx = coalesce(kc.op_idx, ops.idx)
        ORDER BY start_ns"""


def comm_links_table(inputs: F.Inputs, con) -> pa.Table | None:
    """``comm_links`` from communication_matrix.json: keys ``{op_type}-{summary}@{group}``, links
    ``"{src}-{dst}"``; sizes decimal MB -> bytes, times ms -> ns (same macros as comm_ops)."""
    data = _read(inputs, F.COMM_MATRIX)
    if data is None:
        return None
    rows = []
    for step_key, cats in data.items():
        for category, groups in (cats or {}).items():
            for key, links in (groups or {}).items():
                rows.extend(_link_rows(_step(step_key), category, key, links))
    cols = [
        "step",
        "category",
        "op_type",
        "summary",
        "group",
        "src_rank",
        "dst_rank",
        "transport",
        "mb",
        "ms",
        "op_name",
    ]
    types = {"step": pa.int64(), "src_rank": pa.int64(), "dst_rank": pa.int64()}
    con.register(
        "links_arrow",
        pa.table({c: pa.array([r[i] for r in rows], types.get(c, pa.string())) for i, c in enumerate(cols)}),
    )
    out = con.sql("""SELECT step, category, op_type, summary, "group", src_rank, dst_rank, transport,
                            mb_bytes(mb) AS bytes, ms_ns(ms) AS transit_ns, op_name
                     FROM links_arrow""").to_arrow_table()
    con.unregister("links_arrow")
    return out


def _link_rows(step, category, key, links):
    head, _, group = key.rpartition("@") if "@" in key else (key, "", None)
    op_type, _, summary = head.rpartition("-") if "-" in head else (head, "", None)
    for link, rec in (links or {}).items():
        src, _, dst = str(link).partition("-")
        rec = rec or {}
        yield (
            step,
            category,
            op_type.lower(),
            summary,
            group,
            _int(src),
            _int(dst),
            rec.get("Transport Type"),
            _text(rec.get("Transit Size(MB)")),
            _text(rec.get("Transit Time(ms)")),
            rec.get("Op Name"),
        )


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
