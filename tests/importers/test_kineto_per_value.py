"""Values worked out once per distinct value (``kineto._tables._once_per_value``): taken onto
the rows, or left as a dictionary that DuckDB reads as the same column."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from profinsight.importers.kineto import _tables

_SELECT = "upper(x) AS up, length(x) AS n, x IS NULL AS missing"


def test_taken_and_dictionary_forms_read_the_same_in_duckdb():
    values = pa.chunked_array([["ab", None, "c"], ["ab", "c", None, "zz"]])
    con = duckdb.connect()
    taken = _tables._once_per_value(con, values, _SELECT, null_encoding="encode")
    coded = _tables._once_per_value(con, values, _SELECT, null_encoding="encode", dictionary=True)
    assert taken.to_pydict() == {
        "up": ["AB", None, "C", "AB", "C", None, "ZZ"],
        "n": [2, None, 1, 2, 1, None, 2],
        "missing": [False, True, False, False, False, True, False],
    }
    # strings stay indices into the per-value results; other types are taken
    assert pa.types.is_dictionary(coded["up"].type) and coded["n"].type == pa.int64()
    assert coded["up"].combine_chunks().dictionary.to_pylist() == ["AB", None, "C", "ZZ"]
    con.register("coded", coded)
    con.register("taken", taken)
    q = "SELECT up, n, missing, up || '!' AS bang, up IS NULL AS gone FROM {}"
    assert con.sql(q.format("coded")).fetchall() == con.sql(q.format("taken")).fetchall()
    assert con.sql("SELECT typeof(up) FROM coded LIMIT 1").fetchall() == [("VARCHAR",)]
