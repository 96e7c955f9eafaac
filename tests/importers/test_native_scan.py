"""The compiled scanner of an event array (``chrome_trace._native``, ``_scan.c``) against DuckDB's
own JSON reader, the one the importers used alone before it: every value the scanner gives must be
the one DuckDB gives, and where it cannot give the same it must give up (None), so that DuckDB
reads the file.  Then the imports themselves, with and without it, on real fixtures."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from _support import missing

from profinsight.importers.chrome_trace import TRACE_COLUMNS, _native
from profinsight.importers.kineto._events import COLUMNS as KINETO_COLUMNS


@pytest.fixture(autouse=True)
def _scanner(monkeypatch):
    if not _native.available():
        missing("the trace scanner is not built (pip install -e . compiles it; it needs a C compiler)")
    monkeypatch.delenv(_native.ENV, raising=False)


def test_built_where_a_compiler_is():
    """A machine with a C compiler (CI's) has the scanner: the install compiled it."""
    from profinsight.importers.chrome_trace._native_build import compiler

    if compiler() is None:
        pytest.skip("no C compiler here")
    assert _native.available()


def _duckdb(path: Path, columns: dict[str, str]) -> pa.Table:
    cols = "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"
    con = duckdb.connect()
    return con.sql(
        f"SELECT * FROM read_json('{path}', format='array', records=true, columns={cols}, ignore_errors=true)"
    ).to_arrow_table()


def _as_text(table: pa.Table) -> list[tuple]:
    """Rows with every value as DuckDB writes it as text (a DECIMAL's digits, JSON's text)."""
    con = duckdb.connect()
    con.register("t", table)
    cols = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in table.column_names)
    return con.execute(f"SELECT {cols} FROM t").fetchall()


def _check(tmp_path: Path, events: list[str], columns=KINETO_COLUMNS, name: str = "a.json"):
    """The scanner's table of the array of ``events`` (JSON texts), checked against DuckDB's
    reading of the same file when it gives one; None when it gives up."""
    path = tmp_path / name
    path.write_text("[" + ",\n ".join(events) + "]", encoding="utf-8")
    got = _native.read_array(path, columns)
    if got is not None:
        assert _as_text(got) == _as_text(_duckdb(path, columns))
    return got


#: events every value of which the scanner gives as DuckDB does
KEPT = [
    '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4037, "tid": 23695, "ts": 1682725898236567, "dur": 68.0, '
    '"args": {"External id": 41506, "Input Dims": [[2048, 1], []], "Input type": ["float", "Scalar"]}}',
    # escapes of every kind in a text column, raw UTF-8, a surrogate pair
    r'{"ph": "X", "name": "a\"b\\c\/d\n\t\r\b\f \u00e9 \ud83d\ude00 \u4e2d \u0001", "pid": "Spans", "tid": "PyTorch", "ts": 1.5}',
    '{"ph": "i", "name": "中文 naïve", "pid": -3, "tid": 0, "ts": 0, "args": {}}',
    # numbers as DuckDB writes them back: zeros that end a fraction go, ".0" stays
    '{"ph": "X", "name": "n", "pid": 1, "tid": 1, "ts": 4203669605044.538, "dur": 79.250, '
    '"args": {"a": 2.000, "b": 0.0, "c": 0.000, "d": -0.5, "e": 0.0001, "f": 123456789012345.0, '
    '"g": 1.400735294117647, "h": 0.30000000000000004, "i": 12345678901234567890, "j": -7, "k": 1200.0}}',
    # args strings with the escapes DuckDB's JSON writer writes back, literals, nesting
    r'{"ph": "X", "name": "s", "pid": 1, "tid": 1, "ts": 2.25, "dur": "abc", '
    r'"args": {"Call stack": "a.py(1): f;b.py(2): g", "q": "say \"hi\"\\n\n\t", "t": true, "f": false, "n": null, '
    r'"deep": {"x": [1, [2, {"y": []}]], "z": {}}}}',
    # literals and null in text columns, absent keys, keys the import does not read
    '{"ph": "X", "name": true, "cat": false, "pid": null, "ts": null, "dur": 0, "args": null, '
    r'"other": {"any": "\u00e9 \/", "num": 1e300, "neg": -0}, "id": 12}',
    "{}",
    # keys are matched as written, as DuckDB matches them: "PH" and "Name" are other keys
    '{"PH": "X", "Name": "a", "NAME": 1, "ts": 5}',
    '{\n  "ph": "C",\t"name": "mem", "pid": 0, "tid": 0, "ts": 3,\n  "args": {"Allocated": 1048576}\n}',
]

#: values the scanner cannot give as DuckDB does: it gives up on the whole file
GIVES_UP = [
    '{"ph": "X", "ts": 1.2345}',  # more than three decimals of a DECIMAL(38,3)
    '{"ph": "X", "ts": 1e3}',  # an exponent in a DECIMAL
    '{"ph": "X", "ts": "5"}',  # a string for a DECIMAL
    '{"ph": "X", "dur": 1e5}',  # DuckDB writes 100000.0
    '{"ph": "X", "dur": 0.00001}',  # DuckDB writes 1e-05
    '{"ph": "X", "dur": -0}',
    '{"ph": "X", "dur": -0.0}',
    '{"ph": "X", "dur": 0.10000000000000001}',  # not the shortest text of its double
    '{"ph": "X", "dur": 1234567890123456.5}',  # past 15 digits of integer part
    r'{"ph": "X", "args": {"s": "\u00e9"}}',  # an escape DuckDB decodes inside JSON
    r'{"ph": "X", "args": {"s": "a\/b"}}',
    '{"ph": "X", "args": [1, 2]}',  # not an object
    '{"ph": "X", "args": "text"}',
    '{"ph": ["X"]}',  # a container for a text column
    '{"ph": "X", "ph": "i"}',  # a key twice
    r'{"p\u0068": "X"}',  # a key with an escape
    r'{"ph": "X", "name": "nul \u0000"}',
    r'{"ph": "X", "name": "lone \udc00"}',
]

#: not valid JSON, or not an array of objects
BROKEN = [
    '{"ph": "X", "name": "cut',
    '{"ph": "X",}',
    '{"ph": X}',
    '{"ph": "X"} {"ph": "i"}',
    "1",
    '{"ph": "X", "dur": 01}',
    '{"ph": "X", "dur": 1.}',
    '{"ph": "X", "name": "raw\tcontrol"}',
    '{"ph": "X", "args": {"a": tru}}',
]


def test_kept_values_are_duckdbs(tmp_path):
    got = _check(tmp_path, KEPT)
    assert got is not None and got.num_rows == len(KEPT)
    # and each event alone, so that no case hides behind another
    for i, ev in enumerate(KEPT):
        assert _check(tmp_path, [ev], name=f"k{i}.json") is not None, ev


@pytest.mark.parametrize("event", GIVES_UP)
def test_gives_up_where_duckdb_would_differ(tmp_path, event):
    assert _check(tmp_path, [KEPT[0], event]) is None


@pytest.mark.parametrize("event", BROKEN)
def test_gives_up_on_invalid_json(tmp_path, event):
    assert _check(tmp_path, [KEPT[0], event]) is None


@pytest.mark.parametrize("text", ["[]", " [ ]\n", "[{}]"])
def test_empty_arrays(tmp_path, text):
    path = tmp_path / "e.json"
    path.write_text(text, encoding="utf-8")
    got = _native.read_array(path, KINETO_COLUMNS)
    assert got is not None and got.num_rows == text.count("{}")
    assert _as_text(got) == _as_text(_duckdb(path, KINETO_COLUMNS))


def test_unknown_keys_may_hold_anything_valid(tmp_path):
    """A key no column reads is only checked to be JSON: its exponents and escapes cost nothing."""
    ev = r'{"ph": "X", "x": {"a": 1e-7, "b": "\u00e9\/", "c": [1.50, -0]}, "name": "k"}'
    assert _check(tmp_path, [ev]) is not None


def test_ascend_columns(tmp_path):
    """The Ascend export's columns (all text but args), ``ts`` written as a string there."""
    events = [
        '{"ph": "X", "name": "aclnnMm", "pid": 3096504, "tid": 3096504, "ts": "1736408883842779.930", "dur": 0.0, '
        '"cat": "python_function", "args": {"Python id": 2550}}',
        '{"ph": "s", "bp": "e", "name": "torch_to_npu", "id": 1736408883700059821, "pid": 3096504, "tid": 1, '
        '"ts": "1736408883694699.510", "cat": "async_npu"}',
        '{"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "Ascend Hardware"}}',
    ]
    got = _check(tmp_path, events, TRACE_COLUMNS)
    assert got is not None and got.num_rows == 3


def _random_number(rng: random.Random) -> str:
    kind = rng.randrange(8)
    if kind == 0:
        return str(rng.randrange(-(10**20), 10**20))
    if kind == 1:
        return f"{rng.uniform(-1e6, 1e6):.{rng.randrange(0, 7)}f}"
    if kind == 2:
        return repr(rng.uniform(0, 1))  # up to 17 digits, the shortest text
    if kind == 3:
        return repr(rng.uniform(1e-6, 1e-3))
    if kind == 4:
        return f"{rng.uniform(0, 1e16):.1f}"
    if kind == 5:
        return f"{rng.uniform(0, 10):.3f}"  # zeros at the end, sometimes
    if kind == 6:
        return f"{rng.random():.17f}"  # often not the shortest
    return rng.choice(["0", "0.0", "-1", "1e2", "2.5E-3", "-0.0", "100.0"])


def _random_text(rng: random.Random) -> str:
    pieces = ["a", "Z", " ", "é", "中", "\\n", '\\"', "\\\\", "\\/", "\\u00e9", "\\t", "x;y", "(1)", ":"]
    return '"' + "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 8))) + '"'


def _random_value(rng: random.Random, depth: int = 0) -> str:
    k = rng.randrange(9 if depth < 3 else 6)
    if k < 2:
        return _random_number(rng)
    if k < 4:
        return _random_text(rng)
    if k == 4:
        return rng.choice(["true", "false"])
    if k == 5:
        return "null"
    if k < 8:
        return "[" + ", ".join(_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))) + "]"
    return "{" + ", ".join(f'"k{i}": {_random_value(rng, depth + 1)}' for i in range(rng.randrange(0, 4))) + "}"


def _random_event(rng: random.Random) -> str:
    fields = []
    for key in ("ph", "cat", "name", "pid", "tid", "dur"):
        if rng.random() < 0.85:
            fields.append(f'"{key}": {rng.choice([_random_text(rng), _random_number(rng)])}')
    if rng.random() < 0.9:
        fields.append(f'"ts": {rng.choice([str(rng.randrange(10**15, 10**16)), f"{rng.uniform(0, 1e9):.3f}"])}')
    if rng.random() < 0.9:
        fields.append(
            '"args": {' + ", ".join(f'"a{i}": {_random_value(rng)}' for i in range(rng.randrange(0, 5))) + "}"
        )
    rng.shuffle(fields)
    return "{" + ", ".join(fields) + "}"


def test_random_values_one_by_one(tmp_path):
    """Random events, each alone in a file: whatever the scanner gives is DuckDB's value, and it
    gives most of them (a scanner that gave up on everything would pass the first half)."""
    rng = random.Random(20261206)
    kept = 0
    for i in range(400):
        got = _check(tmp_path, [_random_event(rng)], name=f"r{i % 7}.json")
        kept += got is not None
    assert kept >= 100


#: the columns of the Ascend import with the entries of counter events' args (``_trace.EXTRA``)
ENTRY_COLUMNS = {**TRACE_COLUMNS, "args_entries": _native.entries("args", ("ph", "C"))}
_MAP = "map_entries(json_transform(args, '\"MAP(VARCHAR, VARCHAR)\"'))"


def _entries_check(tmp_path: Path, events: list[str], name: str = "e.json"):
    """(scanner's entries, DuckDB's MAP conversion of the same args) per event, or None where the
    scanner gives up; every entries value the scanner gives must be the conversion's."""
    path = tmp_path / name
    path.write_text("[" + ",\n ".join(events) + "]", encoding="utf-8")
    got = _native.read_array(path, ENTRY_COLUMNS)
    if got is None:
        return None
    con = duckdb.connect()
    con.register("t", got)
    mine = [r[0] for r in con.execute("SELECT args_entries FROM t").fetchall()]
    con.register("d", _duckdb(path, TRACE_COLUMNS))
    theirs = [r[0] for r in con.execute(f"SELECT {_MAP} FROM d").fetchall()]
    for a, b in zip(mine, theirs):
        if a is not None:
            assert a == b
    return list(zip(mine, theirs))


def test_entries_are_the_map_conversions(tmp_path):
    """The key/value pairs of a counter event's args are those ``json_transform`` to a MAP gives:
    strings decoded, numbers as DuckDB writes them back, ``true``, ``null`` as a NULL value, in
    the object's order; read whether ``ph`` comes before args or after (the Ascend export's
    order).  NULL -- left to the SQL's own conversion -- for other events, for a nested value and
    for a key written twice (the conversion gives NULL for the whole object)."""
    events = [
        '{"name": "HBM", "ts": "1.000", "pid": 1, "tid": 0, "args": {"Read(MB/s)": 12.5, "acc_id": 0}, "ph": "C"}',
        '{"ph": "C", "name": "QoS", "args": {"value": 1876}}',
        r'{"ph": "C", "name": "s", "args": {"a": "x\"y\\z\n\t", "b": "中 é", "t": true, "f": false, "n": null, '
        r'"z": 2.000, "k": 0.0, "m": -7, "g": 0.30000000000000004}}',
        '{"ph": "C", "name": "empty", "args": {}}',
        '{"ph": "X", "name": "slice", "args": {"value": 1}}',
        '{"ph": "C", "name": "nested", "args": {"value": 1, "list": [1, 2]}}',
        '{"ph": "C", "name": "twice", "args": {"value": 1, "value": 2}}',
        '{"ph": "C", "name": "none"}',
        '{"ph": "C", "name": "null", "args": null}',
    ]
    got = _entries_check(tmp_path, events)
    assert got is not None
    mine = [a for a, _ in got]
    assert mine[0] == [{"key": "Read(MB/s)", "value": "12.5"}, {"key": "acc_id", "value": "0"}]
    assert mine[1] == [{"key": "value", "value": "1876"}]
    assert mine[2] == [
        {"key": "a", "value": 'x"y\\z\n\t'},
        {"key": "b", "value": "中 é"},
        {"key": "t", "value": "true"},
        {"key": "f", "value": "false"},
        {"key": "n", "value": None},
        {"key": "z", "value": "2.0"},
        {"key": "k", "value": "0.0"},
        {"key": "m", "value": "-7"},
        {"key": "g", "value": "0.30000000000000004"},
    ]
    assert mine[3] == []
    assert mine[4:] == [None] * 5  # not a counter; nested; a key twice; no args; null args
    assert got[5][1] is not None and got[6][1] is None  # what the SQL's conversion gives there


def test_random_entries_one_by_one(tmp_path):
    """Random counter events, each alone in a file: every entries value the scanner gives is the
    MAP conversion's, and it gives most of them (one that gave none would pass the first part)."""
    rng = random.Random(20261207)
    given = 0
    for i in range(300):
        n = rng.randrange(0, 5)
        values = [rng.choice([_random_number(rng), _random_text(rng), "true", "false", "null"]) for _ in range(n)]
        args = "{" + ", ".join(f'"k{j}": {v}' for j, v in enumerate(values)) + "}"
        ev = f'{{"name": "c{i}", "args": {args}, "ph": "C", "ts": "{i}.000"}}'
        got = _entries_check(tmp_path, [ev], name=f"e{i % 5}.json")
        given += got is not None and got[0][0] is not None
    assert given >= 100


def test_entries_of_every_event_and_of_a_key_no_other_column_reads(tmp_path):
    """Without ``WHEN`` every event's object has entries; read where no other column reads the key
    (then only the entries column walks it), they are the same MAP conversion's."""
    events = [
        '{"ph": "X", "name": "a", "args": {"value": 1, "s": "x"}}',
        '{"name": "b", "args": {"v": [1]}, "ph": "C"}',
        '{"ph": "C", "name": "c", "args": {}}',
        '{"ph": "i", "name": "d"}',
    ]
    path = tmp_path / "lone.json"
    path.write_text("[" + ", ".join(events) + "]", encoding="utf-8")
    got = _native.read_array(path, {"name": "VARCHAR", "args_entries": _native.entries("args")})
    assert got is not None and got.column_names == ["name", "args_entries"]
    con = duckdb.connect()
    con.register("d", _duckdb(path, TRACE_COLUMNS))
    theirs = [r[0] for r in con.execute(f"SELECT {_MAP} FROM d").fetchall()]
    assert got["args_entries"].to_pylist() == [theirs[0], None, theirs[2], None]
    assert theirs[0] == [{"key": "value", "value": "1"}, {"key": "s", "value": "x"}] and theirs[2] == []


def test_entries_need_their_gate_column(tmp_path):
    """An entries column whose WHEN names no text column of the read is refused (the scanner
    cannot say which events have them), so the reader gives up and DuckDB reads."""
    assert _native.supports(ENTRY_COLUMNS)
    assert not _native.supports({"args": "JSON", "args_entries": _native.entries("args", ("ph", "C"))})
    assert not _native.supports({"ph": "JSON", "args_entries": _native.entries("args", ("ph", "C"))})
    assert _native.supports({"args_entries": _native.entries("args")})
    path = tmp_path / "a.json"
    path.write_text('[{"ph": "C", "args": {"v": 1}}]', encoding="utf-8")
    assert _native.read_array(path, {"args": "JSON", "args_entries": _native.entries("args", ("ph", "C"))}) is None


def test_parts_on_threads_read_the_same(tmp_path, monkeypatch):
    """An array cut into parts read on threads gives the table of one part, where cuts fall on
    events, inside strings and inside arrays of objects (``}, {`` in a name or an args list)."""
    rng = random.Random(7)
    events = []
    for i in range(3000):
        name = rng.choice(["op", "x}, {y", "}, {", 'a}, {\\"ph\\": 1'])
        objs = ", ".join(f'{{"k": {j}}}' for j in range(rng.randrange(0, 4)))
        events.append(
            f'{{"ph": "X", "name": "{name}{i}", "pid": 1, "tid": {i % 5}, "ts": {i}.5, "dur": 1.0, '
            f'"args": {{"list": [{objs}], "n": {i}}}}}'
        )
    path = tmp_path / "parts.json"
    path.write_text("[" + ", ".join(events) + "]\n", encoding="utf-8")
    one = _native.read_array(path, KINETO_COLUMNS, threads=1)
    assert one is not None and one.num_rows == 3000
    monkeypatch.setattr(_native, "PART_MIN_BYTES", 0)
    later = []  # what the scans of parts after the first gave: rows, or -1 at a cut inside an event
    real = _native._Part.scan

    def scan(self, addr, length, first, last):
        rows = real(self, addr, length, first, last)
        if not first:
            later.append(rows)
        return rows

    monkeypatch.setattr(_native._Part, "scan", scan)
    for threads in (2, 3, 8, 64):
        got = _native.read_array(path, KINETO_COLUMNS, threads=threads)
        assert got is not None and got.equals(one), threads
    # both happened: parts that started at an event and were kept, cuts that fell inside one
    assert any(r > 0 for r in later) and any(r < 0 for r in later)
    assert _as_text(one) == _as_text(_duckdb(path, KINETO_COLUMNS))


@pytest.mark.parametrize("shape", ["grows-late", "shrinks-late", "appears-late"])
def test_columns_whose_size_changes_along_the_array(tmp_path, monkeypatch, shape):
    """A column is sized by how fast it grew so far (events are much alike); where the events
    change along the array -- long args only at the end, only at the start, a key first written
    near the end -- the guess is off and the column grows again: the values are still DuckDB's."""
    small = [
        f'{{"ph": "X", "name": "op{i}", "pid": 1, "tid": 2, "ts": {i}, "dur": 1, "args": {{"n": {i}}}}}'
        for i in range(6000)
    ]
    big = [
        f'{{"ph": "X", "name": "k{i}", "pid": 1, "tid": 3, "ts": {i}, "dur": 2, "args": {{"s": "{"x" * 4000}{i}"}}}}'
        for i in range(300)
    ]
    if shape == "grows-late":
        events = small + big
    elif shape == "shrinks-late":
        events = big + small
    else:  # "cat" is absent from every event but the last few hundred
        events = small + [e.replace('"ph": "X"', '"ph": "X", "cat": "kernel"') for e in big]
    path = tmp_path / "a.json"
    path.write_text("[" + ",\n".join(events) + "]", encoding="utf-8")
    monkeypatch.setattr(_native, "PART_MIN_BYTES", 0)  # two parts of this small file, too
    for threads in (1, 2):
        got = _native.read_array(path, KINETO_COLUMNS, threads=threads)
        assert got is not None and got.num_rows == len(events)
        assert _as_text(got) == _as_text(_duckdb(path, KINETO_COLUMNS)), threads


def test_a_span_of_the_file(tmp_path):
    """``span``: the array inside a ``{"traceEvents": [...]}`` object, read in place."""
    body = "[" + ", ".join(KEPT[:3]) + "]"
    text = '{"schemaVersion": 1, "traceEvents": ' + body + ', "deviceProperties": []}'
    path = tmp_path / "obj.json"
    path.write_text(text, encoding="utf-8")
    start = text.encode().index(b"[{")
    got = _native.read_array(path, KINETO_COLUMNS, span=(start, start + len(body.encode())))
    assert got is not None and got.num_rows == 3
    assert _native.read_array(path, KINETO_COLUMNS, span=(start, start + 5)) is None  # a cut array


def test_off_by_environment(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    path.write_text("[" + KEPT[0] + "]", encoding="utf-8")
    monkeypatch.setenv(_native.ENV, "0")
    assert _native.read_array(path, KINETO_COLUMNS) is None


def _tables(prof) -> dict:
    return {n: prof.arrow(n) for n in prof.row_counts()}


@pytest.mark.parametrize(
    "rel",
    [
        "kineto/gpu_2rank_rank0.json.gz",
        "kineto/amd_mi250.json.gz",
        "kineto/legacy/resnet50_tb_plugin_2021.json.gz",
        "ascend_pt/text_level0/rank0_ascend_pt",
    ],
)
def test_imports_are_the_same_with_and_without(fixtures, rel, monkeypatch, tmp_path):
    """A real import, read by the scanner and by DuckDB alone: every table and diagnostic equal,
    and the scanner did read it (it gave up on none of these)."""
    import profinsight

    src = fixtures / rel
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    read = []
    real = _native.batches

    def counting(*a, **k):
        try:
            yield from real(*a, **k)
            read.append(True)
        except _native.GaveUp:
            read.append(False)
            raise

    monkeypatch.setattr(_native, "batches", counting)
    fast = profinsight.load(src)
    assert read and all(read)
    monkeypatch.setenv(_native.ENV, "0")
    slow = profinsight.load(src)
    a, b = _tables(fast), _tables(slow)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name
    assert [d.to_dict() for d in fast.diagnostics] == [d.to_dict() for d in slow.diagnostics]


def test_not_built_is_duckdb(tmp_path, monkeypatch):
    """Without the library the reader says so (None) and the import reads with DuckDB."""
    monkeypatch.setattr(_native, "HERE", tmp_path)
    _native._lib.cache_clear()
    try:
        assert not _native.available()
        path = tmp_path / "a.json"
        path.write_text("[" + KEPT[0] + "]", encoding="utf-8")
        assert _native.read_array(path, KINETO_COLUMNS) is None
    finally:
        _native._lib.cache_clear()


def _kineto_trace(events: list[str]) -> str:
    return '{"schemaVersion": 1, "traceEvents": [' + ", ".join(events) + "]}"


def _kineto_events(n: int) -> list[str]:
    out = []
    for i in range(n):
        out.append(
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::op{i % 7}", "pid": 10, "tid": 10, "ts": {1000 + 10 * i}, '
            f'"dur": 5.0, "args": {{"External id": {i}, "Input Dims": [[{i % 3}, 4]], "Input type": ["float"]}}}}'
        )
        out.append(
            f'{{"ph": "X", "cat": "kernel", "name": "k{i % 5}", "pid": 0, "tid": 7, "ts": {1002 + 10 * i}, "dur": 2.0, '
            f'"args": {{"External id": {i}, "device": 0, "stream": 7, "correlation": {i}, "grid": [1, 1, 1]}}}}'
        )
    return out


def test_batches_read_the_same_as_one_table(tmp_path):
    """A trace read in many small tables (each its own parts) gives the rows of one table."""
    path = tmp_path / "a.json"
    path.write_text("[" + ", ".join(_kineto_events(400)) + "]", encoding="utf-8")
    one = _native.read_array(path, KINETO_COLUMNS)
    read = list(_native.batches(path, KINETO_COLUMNS, threads=2, batch_bytes=3000))
    many = [b.table for b in read]
    assert len(many) > 20 and read[-1].end == path.stat().st_size
    assert all(a.end < b.end for a, b in zip(read, read[1:]))
    assert pa.concat_tables(many).equals(one.combine_chunks()) or _as_text(pa.concat_tables(many)) == _as_text(one)


@pytest.mark.parametrize("late", [False, True], ids=["first-table", "after-tables-were-taken"])
def test_giving_up_late_goes_on_with_duckdb(tmp_path, monkeypatch, late):
    """The scanner gives up on a value it cannot give as DuckDB does (here ``2e0``): at once, and
    DuckDB reads the whole file; or after tables of the file were taken, and DuckDB reads on from
    the event where the table it gave up on starts.  Either way no event is missing or there
    twice: every table and diagnostic equals DuckDB's alone."""
    import profinsight

    events = _kineto_events(300)
    at = len(events) - 3 if late else 1
    events[at] = events[at].replace('"dur": 2.0', '"dur": 2e0')
    path = tmp_path / "t.json"
    path.write_text(_kineto_trace(events), encoding="utf-8")
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    monkeypatch.setattr(_native, "BATCH_BYTES", 4000)
    taken = []
    real = _native.batches

    def counting(*a, **k):
        for b in real(*a, **k):
            taken.append(b.table.num_rows)
            yield b

    monkeypatch.setattr(_native, "batches", counting)
    fast = profinsight.load(path)
    assert (len(taken) > 10) if late else not taken
    monkeypatch.setenv(_native.ENV, "0")
    slow = profinsight.load(path)
    a, b = _tables(fast), _tables(slow)
    assert a["host_ops"].num_rows == 300 and a["device_tasks"].num_rows == 300
    for name in a:
        assert a[name].equals(b[name]), name
    # (events taken twice would be dropped as exact copies -- and said to be: no such warning)
    assert [d.to_dict() for d in fast.diagnostics] == [d.to_dict() for d in slow.diagnostics]


@pytest.mark.parametrize("cut", [0.3, 0.97])
def test_a_cut_file_reads_as_with_duckdb_alone(tmp_path, monkeypatch, cut):
    """A trace cut short: the scanner takes the tables before the cut, gives up on the one that
    holds it, and DuckDB's reader goes on from there and says what was lost -- the same tables
    and the same warning, counts included, as DuckDB alone."""
    import profinsight

    text = _kineto_trace(_kineto_events(300))
    path = tmp_path / "cut.json"
    path.write_text(text[: int(len(text) * cut)], encoding="utf-8")
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    monkeypatch.setattr(_native, "BATCH_BYTES", 4000)
    fast = profinsight.load(path)
    monkeypatch.setenv(_native.ENV, "0")
    slow = profinsight.load(path)
    a, b = _tables(fast), _tables(slow)
    assert a["host_ops"].num_rows > 50
    for name in a:
        assert a[name].equals(b[name]), name
    assert [d.to_dict() for d in fast.diagnostics] == [d.to_dict() for d in slow.diagnostics]
    assert any(d.code == "trace-truncated" for d in fast.diagnostics)
