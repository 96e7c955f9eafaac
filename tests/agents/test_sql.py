"""The sql tool: DuckDB's parser admits one SELECT only; the connection reads the profile's
Parquet files and nothing else, its configuration locked; a timer stops a long query."""

from __future__ import annotations

import duckdb
import pytest

from profinsight.agents.sql import check_select, connection, run_select
from profinsight.errors import ProfileError

SAMPLE = "rank0_ascend_pt"


@pytest.fixture(scope="module")
def profile(session):
    return session.roots.profile(SAMPLE)[1]


@pytest.mark.parametrize(
    "query, kind",
    [
        ("COPY (SELECT * FROM device_tasks) TO 'x.csv'", "COPY"),
        ("CREATE TABLE t AS SELECT 1", "CREATE"),
        ("ATTACH 'other.db'", "ATTACH"),
        ("INSTALL httpfs", "LOAD"),
        ("LOAD httpfs", "LOAD"),
        ("PRAGMA threads=1", "SET"),
        ("SET enable_external_access = true", "SET"),
        ("EXPORT DATABASE 'out'", "EXPORT"),
        ("DROP VIEW device_tasks", "DROP"),
        ("INSERT INTO device_tasks SELECT * FROM device_tasks", "INSERT"),
        ("/* SELECT */ COPY device_tasks TO 'x.parquet'", "COPY"),
    ],
)
def test_only_select_parses(query, kind):
    with pytest.raises(ProfileError, match=f"only SELECT statements run here; this is a {kind} statement"):
        check_select(query)


def test_one_statement_only():
    with pytest.raises(ProfileError, match="one statement per call, not 2"):
        check_select("SELECT 1; COPY (SELECT 1) TO 'x.csv'")
    with pytest.raises(ProfileError, match="SQL does not parse"):
        check_select("SELEC 1")
    assert check_select("  WITH a AS (SELECT 1 AS x) SELECT x FROM a ") == "WITH a AS (SELECT 1 AS x) SELECT x FROM a"


def test_parquet_views_still_work(profile):
    files = profile.parquet_files("device_tasks")
    assert files and all(f.suffix == ".parquet" for f in files)  # the views read the cache, not Arrow
    got = run_select(profile, "SELECT count(*) AS n, sum(dur_ns) AS ns FROM device_tasks WHERE kind = 'kernel'")
    want = profile.sql("SELECT count(*) AS n, sum(dur_ns) AS ns FROM device_tasks WHERE kind = 'kernel'")
    assert got["rows"] == [[187, int(want["ns"].iloc[0])]]
    assert got["rows"][0][0] == 187


def test_no_file_outside_the_profile(profile, tmp_path):
    con = connection(profile)
    cache_dir = profile.parquet_files("device_tasks")[0].parent
    # past the parser, the connection itself refuses: writing into the cache folder ...
    with pytest.raises(duckdb.PermissionException):
        con.execute(f"COPY (SELECT 1 AS x) TO '{cache_dir / 'evil.parquet'}'")
    assert not (cache_dir / "evil.parquet").exists()
    # ... reading another file, and unlocking the configuration
    with pytest.raises(ProfileError, match="Permission Error"):
        run_select(profile, "SELECT * FROM read_text('/etc/hostname')")
    with pytest.raises(ProfileError, match="Permission Error"):
        run_select(profile, f"SELECT * FROM glob('{tmp_path}/*')")
    with pytest.raises(duckdb.Error, match="locked"):
        con.execute("SET enable_external_access = true")


def test_rows_bounded_with_marker(profile):
    got = run_select(profile, "SELECT task_uid FROM device_tasks ORDER BY task_uid", max_rows=10)
    assert len(got["rows"]) == 10 and got["total_rows"] == 539
    assert got["truncated"].startswith("truncated, 529 more rows")


def test_timer_stops_a_long_query(profile):
    with pytest.raises(ProfileError, match="query stopped after 0.2 s"):
        run_select(profile, "SELECT sum(hash(a.range + b.range)) FROM range(100000000) a, range(1000) b", timeout_s=0.2)
    assert run_select(profile, "SELECT 1 AS one")["rows"] == [[1]]  # the connection still answers
