"""Damaged input: a bad value costs that value (or its event), never the rank, and every loss is
counted in one diagnostic naming the file.  Every damaged input is a real fixture copied to
``tmp_path`` with a few values changed; the expected counts are those of the undamaged load
minus exactly the damaged rows."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest

from profinsight.importers import ascend_text, kineto, load_rank

_BASE: dict = {}
RANK0 = ("ascend_pt", "text_level1", "rank0_ascend_pt")
KINETO = ("kineto", "gpu_2rank_rank0.json.gz")


def counts(rd) -> dict[str, int]:
    return {name: t.num_rows for name, t in rd.tables.items()}


def base(fixtures: Path, key: tuple[str, ...]):
    if key not in _BASE:
        path = fixtures.joinpath(*key)
        importer = kineto if key[0] == "kineto" else ascend_text
        _BASE[key] = load_rank(importer.sniff(path))
    return _BASE[key]


def new_diags(rd, before, code: str | None = None) -> list:
    old = {(d.code, d.message) for d in before.diagnostics}
    return [d for d in rd.diagnostics if (d.code, d.message) not in old and (code is None or d.code == code)]


def assert_only_changed(rd, before, **delta: int) -> None:
    """Every table has the undamaged row count, except those in ``delta`` (table=change)."""
    got, want = counts(rd), counts(before)
    for name, d in delta.items():
        want[name] += d
    assert got == want


# --- trace_view.json ------------------------------------------------------------------------
def text_copy(fixtures: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures.joinpath(*RANK0), dst)
    return dst


def damage_trace(folder: Path, change, n: int = 1, cat: str = "cpu_op") -> list[dict]:
    """Apply ``change`` to the first ``n`` slices of category ``cat`` in trace_view.json."""
    tv = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text(encoding="utf-8"))
    hit = [e for e in events if e.get("ph") == "X" and e.get("cat") == cat][:n]
    assert len(hit) == n
    for e in hit:
        change(events, e)
    tv.write_text(json.dumps(events), encoding="utf-8")
    return hit


def _set(key, value):
    def change(events, e):
        e[key] = value

    return change


def _drop(key):
    def change(events, e):
        del e[key]

    return change


TRACE_DAMAGE = [
    ("ts-huge-text", _set("ts", "-1e30"), "no usable timestamp (ts = -1e30)"),
    ("ts-infinity", _set("ts", float("inf")), "no usable timestamp (ts = Infinity)"),
    ("ts-1e308", _set("ts", 1e308), "no usable timestamp (ts = 1e+308)"),
    ("ts-text", _set("ts", "abc"), "no usable timestamp (ts = 'abc')"),
    ("ts-missing", _drop("ts"), "no usable timestamp (ts = missing)"),
    ("pid-missing", _drop("pid"), "no pid (process id)"),
    ("ph-unknown", _set("ph", "Q"), "an unknown or missing phase (ph = 'Q')"),
    ("dur-negative", _set("dur", -5.0), "a negative or unusable duration (dur = -5.0)"),
]


@pytest.mark.parametrize(("case", "change", "said"), TRACE_DAMAGE, ids=[c[0] for c in TRACE_DAMAGE])
def test_a_damaged_trace_event_costs_that_event_only(fixtures, tmp_path, case, change, said):
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    damage_trace(folder, change, n=3)
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before, host_ops=-3)
    dropped = new_diags(rd, before, "events-dropped")
    assert [d.message for d in dropped] == [f"3 event(s) of trace_view.json had {said}: dropped."]
    assert dropped[0].severity == "warning" and dropped[0].file.endswith("trace_view.json")
    assert rd.rank == before.rank
    assert min(rd.tables["host_ops"].column("dur_ns").to_pylist()) >= 0


def test_each_kind_of_trace_damage_has_its_own_count(fixtures, tmp_path):
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    kinds = iter([_set("ts", "abc"), _set("dur", -1.0), _set("ts", "Infinity"), _drop("pid")])
    damage_trace(folder, lambda events, e: next(kinds)(events, e), n=4)
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before, host_ops=-4)
    assert sorted(d.message for d in new_diags(rd, before, "events-dropped")) == [
        "1 event(s) of trace_view.json had a negative or unusable duration (dur = -1.0): dropped.",
        "1 event(s) of trace_view.json had no pid (process id): dropped.",
        "2 event(s) of trace_view.json had no usable timestamp (ts = Infinity, 'abc'): dropped.",
    ]


def test_duplicated_trace_events_are_counted_once(fixtures, tmp_path):
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    damage_trace(folder, lambda events, e: events.append(dict(e)), n=2)
    damage_trace(folder, lambda events, e: events.append(dict(e)), n=1, cat=None)  # a device task
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before)
    dup = new_diags(rd, before, "events-duplicated")
    assert len(dup) == 1 and dup[0].message.startswith("3 event(s) of trace_view.json were exact copies")
    assert not new_diags(rd, before, "events-dropped")


def test_the_undamaged_trace_says_nothing_new(fixtures, tmp_path):
    before = base(fixtures, RANK0)
    assert not [d for d in before.diagnostics if d.code.startswith("events-")]


# --- Kineto ---------------------------------------------------------------------------------
def kineto_copy(fixtures: Path, tmp_path: Path, change, n: int = 1, cat: str = "kernel") -> Path:
    doc = json.loads(gzip.decompress(fixtures.joinpath(*KINETO).read_bytes()))
    hit = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat][:n]
    assert len(hit) == n
    for e in hit:
        change(doc["traceEvents"], e)
    out = tmp_path / "damaged.pt.trace.json.gz"
    out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out


KINETO_DAMAGE = [
    ("ts-huge-text", _set("ts", "-1e30"), "no usable timestamp (ts = -1e+30)"),
    ("ts-infinity", _set("ts", float("inf")), "no usable timestamp"),
    ("ts-text", _set("ts", "abc"), "no usable timestamp"),
    ("ts-missing", _drop("ts"), "no usable timestamp"),
    ("pid-missing", _drop("pid"), "no pid (process id)"),
    ("ph-unknown", _set("ph", "Q"), "an unknown or missing phase (ph = 'Q')"),
    ("dur-negative", _set("dur", -5.0), "a negative or unusable duration (dur = -5.0)"),
    ("dur-infinite", _set("dur", float("inf")), "a negative or unusable duration (dur = Infinity)"),
    ("dur-text", _set("dur", "abc"), "a negative or unusable duration (dur = 'abc')"),
]


@pytest.mark.parametrize(("case", "change", "said"), KINETO_DAMAGE, ids=[c[0] for c in KINETO_DAMAGE])
def test_a_damaged_kineto_event_costs_that_event_only(fixtures, tmp_path, case, change, said):
    before = base(fixtures, KINETO)
    path = kineto_copy(fixtures, tmp_path, change, n=2)
    rd = load_rank(kineto.sniff(path))
    # each of the two kernels had its launch link and its host-op link
    assert_only_changed(rd, before, device_tasks=-2, launches=-4)
    dropped = new_diags(rd, before, "events-dropped")
    assert [d.message for d in dropped] == [f"2 event(s) of {path.name} had {said}: dropped."]
    assert rd.rank == before.rank
    assert min(rd.tables["device_tasks"].column("dur_ns").to_pylist()) >= 0


def test_duplicated_kineto_events_are_counted_once(fixtures, tmp_path):
    before = base(fixtures, KINETO)
    path = kineto_copy(fixtures, tmp_path, lambda events, e: events.append(dict(e)), n=3)
    rd = load_rank(kineto.sniff(path))
    assert_only_changed(rd, before)
    dup = new_diags(rd, before, "events-duplicated")
    assert len(dup) == 1 and dup[0].message.startswith(f"3 event(s) of {path.name} were exact copies")


@pytest.mark.parametrize("gz", [False, True])
def test_broken_json_in_a_kineto_trace_costs_the_events_it_hit(fixtures, tmp_path, gz):
    """Two kernels' text broken (a key lost its quotes) in the middle of the trace, which is no
    longer valid JSON: the read steps over them and goes on (once a copy of the whole trace
    parsed event by event in Python), in place or gunzipped; the two kernels and their links
    are all that is lost, and the warning says it is an estimate."""
    before = base(fixtures, KINETO)
    doc = json.loads(gzip.decompress(fixtures.joinpath(*KINETO).read_bytes()))
    kernels = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    text = json.dumps(doc)
    for e in (kernels[40], kernels[300]):
        one = json.dumps(e)
        text = text.replace(one, one.replace('"name"', "name", 1), 1)
    path = tmp_path / ("broken.pt.trace.json" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    rd = load_rank(kineto.sniff(path))
    assert_only_changed(rd, before, device_tasks=-2, launches=-4)
    (said,) = new_diags(rd, before, "malformed-events")
    assert said.message.startswith("about 2 event(s) (") and "bytes, in 2 place(s)) of the event list" in said.message
    assert said.severity == "warning" and said.file.endswith(path.name)


def test_a_huge_kineto_rank_is_ignored(fixtures, tmp_path):
    before = base(fixtures, KINETO)

    def change(events, e):
        pass

    doc = json.loads(gzip.decompress(fixtures.joinpath(*KINETO).read_bytes()))
    doc["distributedInfo"]["rank"] = 10**30
    doc["distributedInfo"]["world_size"] = 10**30
    path = tmp_path / "huge_rank.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    rd = load_rank(kineto.sniff(path))
    assert_only_changed(rd, before)
    assert rd.rank is None or 0 <= rd.rank < 2**31
    assert rd.tables["run_info"].column("world_size").to_pylist() == [None]
    said = sorted(d.message for d in new_diags(rd, before, "meta-field-invalid"))
    assert said == [
        f"{path.name}: field 'distributedInfo.{key}' = 1e+30 is not of the expected type or range "
        "(an integer, 0 .. 2^31 for a rank, 1 .. 2^31 for a world size); ignored."
        for key in ("rank", "world_size")
    ]
    assert not [d for d in before.diagnostics if d.code == "meta-field-invalid"]


# --- CSVs of the text export ---------------------------------------------------------------
def damage_csv(folder: Path, name: str, column: str, values: list[str]) -> int:
    """Write ``values`` into ``column`` of the first rows of CSV ``name``; returns the row count."""
    path = folder / "ASCEND_PROFILER_OUTPUT" / name
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index(column)
    filled = [i for i in range(1, len(rows)) if rows[i][col].strip() not in ("", "N/A")][: len(values)]
    for i, v in zip(filled, values):
        rows[i][col] = v
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return len(rows) - 1


@pytest.mark.parametrize(
    ("file", "column", "table", "out"),
    [
        ("memory_record.csv", "Total Reserved(MB)", "memory_samples", "reserved_bytes"),
        ("npu_module_mem.csv", "Total Reserved(MB)", "module_memory", "reserved_bytes"),
        ("operator_memory.csv", "Size(KB)", "memory_blocks", "size_bytes"),
        ("kernel_details.csv", "Duration(us)", "device_tasks", "dur_ns"),
    ],
)
def test_a_bad_csv_cell_costs_that_value_only(fixtures, tmp_path, file, column, table, out):
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    damage_csv(folder, file, column, ["1e400", "abc", "inf"])
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before)
    nulls = rd.tables[table].column(out).null_count - before.tables[table].column(out).null_count
    assert nulls == 3
    bad = new_diags(rd, before, "csv-bad-values")
    assert [d.message for d in bad] == [
        f"{file}: 3 value(s) of column {column!r} are not usable numbers ('1e400', 'abc', 'inf'): "
        "set to null, their rows kept."
    ]
    assert bad[0].file.endswith(file)


# --- profiler_info / profiler_metadata -----------------------------------------------------
def _edit_json(path: Path, change) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


META_DAMAGE = [
    ("rank-huge", "profiler_info_0.json", lambda d: d.update(rank_id=10**30), ["rank_id"]),
    ("config-list", "profiler_info_0.json", lambda d: d.update(config=[1, 2]), ["config"]),
    (
        "switch-text",
        "profiler_info_0.json",
        lambda d: d["config"]["common_config"].update(record_shapes="yes", activities="CPU"),
        ["config.common_config.activities", "config.common_config.record_shapes"],
    ),
    (
        "end-huge",
        "profiler_info_0.json",
        lambda d: d["end_info"].update(collectionTimeEnd=10**30),
        ["end_info.collectionTimeEnd"],
    ),
    ("top-list", "profiler_info_0.json", lambda d: (d.clear(), None), []),
    ("env-list", "profiler_metadata.json", lambda d: d.update(ENV_VARIABLES=["x"]), ["ENV_VARIABLES"]),
    ("dist-list", "profiler_metadata.json", lambda d: d.update(distributed_args=[1]), []),
]


@pytest.mark.parametrize(("case", "file", "change", "fields"), META_DAMAGE, ids=[c[0] for c in META_DAMAGE])
def test_a_malformed_meta_field_is_ignored_and_named(fixtures, tmp_path, case, file, change, fields):
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    _edit_json(folder / file, change)
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before)
    assert rd.rank == 0
    named = sorted(
        d.message.split("field ")[1].split(" = ")[0].strip("'") for d in new_diags(rd, before, "meta-field-invalid")
    )
    assert named == sorted(fields)


def test_a_meta_file_that_is_not_an_object_is_said(fixtures, tmp_path):
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    (folder / "profiler_info_0.json").write_text("[1, 2, 3]", encoding="utf-8")
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before)
    (bad,) = new_diags(rd, before, "meta-field-invalid")
    assert "profiler_info_0.json" in bad.message and "(top level)" in bad.message


def test_a_stray_line_in_operator_memory_is_no_block(fixtures, tmp_path):
    """A line holding a name and empty cells (padded to 80 of them) among operator_memory.csv's
    rows: DuckDB's reader keeps such a row (extra empty cells are no error to it), so it is
    judged by its content -- neither a size nor an allocation time -- dropped and said; a row
    whose size is unreadable keeps its row, as before."""
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    path = folder / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(50, b"x" * 40 + b"," * 80 + b"\r\n")
    lines.insert(90, b"aten::stray,abc" + b"," * 13 + b"\r\n")
    path.write_bytes(b"".join(lines))
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before, memory_blocks=1)
    said = sorted(d.message for d in new_diags(rd, before))
    assert said == [
        "operator_memory.csv: 1 row(s) dropped because they hold neither a size nor an allocation time.",
        "operator_memory.csv: 1 value(s) of column 'Size(KB)' are not usable numbers ('abc'): set to null, "
        "their rows kept.",
    ]


@pytest.mark.parametrize("how", ["broken", "cut"])
def test_a_damaged_communication_json_keeps_the_op_records_that_parse(fixtures, tmp_path, how):
    """communication.json with one key's quotes gone inside the third op's record, or cut inside
    it: the ops before it (and after it, where the file goes on) keep their wait, transit and
    bytes; the broken op's are null, its row kept (its time comes from kernel_details.csv)."""
    before = base(fixtures, RANK0)
    folder = text_copy(fixtures, tmp_path)
    path = folder / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    raw = path.read_bytes()
    at = raw.index(b'"hcom_allReduce__586_2_1@')
    if how == "broken":
        path.write_bytes(raw[:at] + raw[at:].replace(b'"Wait Time(ms)"', b'Wait Time(ms)"', 1))
    else:
        path.write_bytes(raw[: at + 300])
    rd = load_rank(ascend_text.sniff(folder))
    assert_only_changed(rd, before)
    (said,) = new_diags(rd, before, "json-invalid")
    kept = 3 if how == "broken" else 2
    assert said.message.endswith(f"; the {kept} op record(s) that parse were kept, 1 could not be read.")
    cols = ["name", "wait_ns", "transit_ns", "sync_ns", "bytes", "rdma_bytes", "hccs_bytes"]
    whole, got = before.tables["comm_ops"].select(cols).to_pylist(), rd.tables["comm_ops"].select(cols).to_pylist()
    broken = {"hcom_allReduce__586_2_1"} | ({"hcom_allReduce__586_3_1"} if how == "cut" else set())
    for w, g in zip(whole, got):
        if w["name"] in broken:
            assert g == {**w, **dict.fromkeys(cols[1:])}
        else:
            assert g == w
