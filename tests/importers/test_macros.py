"""The conversion macros' fast paths give exactly what their plain definitions give.

``ts_ns``, ``time_ns`` and the number macros (:data:`profinsight.importers._common.MACROS`) skip
``clean`` (a ``trim`` per cell) where the cell casts as it is or is a time written the exports'
way, and ``clean`` itself trims only a cell with white space or a quote at either end.  The plain definitions below are what they were before; every cell of the fixtures' CSVs and
tens of thousands of random strings (signs, dots, exponents, hex, every kind of white space,
quotes, N/A) must convert the same both ways, as must numbers and JSON values given directly."""

from __future__ import annotations

import math
import random

import duckdb
import pyarrow as pa

from profinsight.importers._common import MACROS


def _macro(name: str) -> str:
    """The definition of ``name`` in :data:`MACROS` (a helper the fast paths did not change)."""
    (found,) = [m for m in MACROS if m.startswith(f"CREATE OR REPLACE MACRO {name}(")]
    return found


#: the general time form as it was first written: ``clean(x)`` spelled out at each use (the code's
#: form computes it once, inside a lambda)
TS_NS_GENERAL = """CREATE OR REPLACE MACRO ts_ns_general(x) AS (CASE
         WHEN clean(x) IS NULL THEN NULL
         WHEN contains(lower(clean(x)), 'e') OR contains(lower(clean(x)), 'n')
           THEN scaled_int(TRY_CAST(clean(x) AS DOUBLE), 1000)
         WHEN length(split_part(clean(x), '.', 1)) > 17 THEN NULL
         ELSE TRY_CAST(TRY_CAST(split_part(clean(x), '.', 1) AS HUGEINT) * 1000
              + (CASE WHEN starts_with(clean(x), '-') THEN -1 ELSE 1 END)
                * TRY_CAST(rpad(left(split_part(clean(x), '.', 2), 3), 3, '0') AS BIGINT) AS BIGINT)
       END)"""

#: ``clean`` as first written: a ``trim`` of white space and quotes on every cell (the code keeps
#: a cell that has none at either end as it is, and trims only the others)
CLEAN_PLAIN = (
    "CREATE OR REPLACE MACRO clean(x) AS nullif(nullif(trim(CAST(x AS VARCHAR), "
    "' ' || chr(9) || chr(10) || chr(13) || '\"'), ''), 'N/A')"
)

#: the definitions the fast paths must equal: the unchanged helpers as the code has them and the
#: general time form as first written, each fast macro in its plain form over them
PLAIN = [
    *(_macro(n) for n in ("scaled_int", "scaled_uint")),
    CLEAN_PLAIN,
    TS_NS_GENERAL,
    "CREATE OR REPLACE MACRO ts_ns(x) AS ts_ns_general(x)",
    "CREATE OR REPLACE MACRO time_ns(x) AS (CASE WHEN starts_with(clean(x), '-') THEN NULL ELSE ts_ns(x) END)",
    "CREATE OR REPLACE MACRO dur_ns(x) AS scaled_uint(TRY_CAST(clean(x) AS DOUBLE), 1000)",
    "CREATE OR REPLACE MACRO ms_ns(x) AS scaled_uint(TRY_CAST(clean(x) AS DOUBLE), 1000000)",
    """CREATE OR REPLACE MACRO int_or_null(x) AS (CASE
         WHEN TRY_CAST(clean(x) AS BIGINT) = 4294967295 THEN NULL ELSE TRY_CAST(clean(x) AS BIGINT) END)""",
    "CREATE OR REPLACE MACRO num_or_null(x) AS TRY_CAST(clean(x) AS DOUBLE)",
    "CREATE OR REPLACE MACRO int_cell(x) AS TRY_CAST(clean(x) AS BIGINT)",
    "CREATE OR REPLACE MACRO mib_bytes(x) AS scaled_uint(TRY_CAST(clean(x) AS DOUBLE), 1048576)",
    "CREATE OR REPLACE MACRO kib_bytes(x) AS scaled_uint(TRY_CAST(clean(x) AS DOUBLE), 1024)",
    "CREATE OR REPLACE MACRO mb_bytes(x) AS scaled_uint(TRY_CAST(clean(x) AS DOUBLE), 1000000)",
]
NAMES = [
    "clean", "ts_ns", "time_ns", "dur_ns", "ms_ns", "int_or_null", "num_or_null", "int_cell",
    "mib_bytes", "kib_bytes", "mb_bytes",
]  # fmt: skip
TYPED = [
    "SELECT unnest([0.0, -0.0, 1.5, -1.5, 1e20, 1e-7, 123456.789, 'inf'::DOUBLE, '-inf'::DOUBLE, "
    "'nan'::DOUBLE, 4294967295.0, 1736408883573957.92]) AS x",
    "SELECT unnest(['1.5'::JSON, '\"2.5\"'::JSON, 'true'::JSON, 'null'::JSON, '\"N/A\"'::JSON, "
    "'[1]'::JSON, '{\"a\":1}'::JSON, '\" 7 \"'::JSON, '1736408883573957.920'::JSON]) AS x",
    "SELECT unnest([0, -5, 4294967295, 9223372036854775807, NULL]::BIGINT[]) AS x",
]


def _strings(fixtures, n: int, seed: int) -> list[str | None]:
    cells: set = set()
    con = duckdb.connect()
    for path in sorted(fixtures.rglob("*.csv")):
        try:
            rows = con.execute(
                "SELECT * FROM read_csv(?, all_varchar=true, header=true, ignore_errors=true)", [str(path)]
            ).fetchall()
        except duckdb.Error:
            continue
        for row in rows[:2000]:
            cells.update(row)
    rnd = random.Random(seed)
    chars = list('0123456789.-+eEnNaifxA/ _"\t\n\r\x0b\x0cé１') + ["inf", "nan", "N/A", "0x1F", "1_0"]
    space = [" ", "\t", "\n", "\r", "\x0b", "\x0c", '"', ""]
    for _ in range(n):
        cells.add("".join(rnd.choice(chars) for _ in range(rnd.randint(0, 12))))
        s = rnd.choice(["", "+", "-", "--"]) + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(0, 20)))
        if rnd.random() < 0.8:
            s += rnd.choice([".", "..", ""]) + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(0, 6)))
        if rnd.random() < 0.1:
            s += rnd.choice(["e", "E", "e-", "e+"]) + str(rnd.randint(0, 400))
        pad = lambda: "".join(rnd.choice(space) for _ in range(rnd.randint(0, 3)))  # noqa: E731
        cells.add(pad() + s + pad())
    return sorted(cells, key=lambda v: (v is None, v or ""))


def _convert(macros: list[str], table: pa.Table) -> tuple[pa.Table, list]:
    con = duckdb.connect()
    for m in macros:
        con.execute(m)
    con.register("t", table)
    cells = con.sql(f"SELECT x, {', '.join(f'{m}(x) AS {m}' for m in NAMES)} FROM t").to_arrow_table()
    typed = [con.sql(f"SELECT x, {', '.join(f'{m}(x)' for m in NAMES[1:])} FROM ({q})").fetchall() for q in TYPED]
    return cells, typed


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def test_fast_macros_convert_every_cell_as_the_plain_ones(fixtures):
    strings = _strings(fixtures, 40_000, seed=7)
    assert len(strings) > 60_000
    table = pa.table({"x": pa.array(strings, pa.string())})
    fast, fast_typed = _convert(MACROS, table)
    plain, plain_typed = _convert(PLAIN, table)
    for name in NAMES:
        got, want = fast.column(name).to_pylist(), plain.column(name).to_pylist()
        wrong = [(strings[i], want[i], got[i]) for i in range(len(want)) if not _same(got[i], want[i])]
        assert not wrong, f"{name}: {len(wrong)} cells differ, e.g. {wrong[:5]}"
    for got, want in zip(fast_typed, plain_typed):
        assert all(all(_same(g, w) for g, w in zip(gr, wr)) for gr, wr in zip(got, want)), (got, want)
    # the fast paths were taken: a time as the CSVs write it, a number with a tab after it
    con = duckdb.connect()
    for m in MACROS:
        con.execute(m)
    assert con.execute("SELECT ts_ns('1736408883573957.920\t'), mib_bytes('1452.0 ')").fetchall() == [
        (1736408883573957920, 1522532352)
    ]
