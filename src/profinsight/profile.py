"""The loaded profile: canonical tables of every rank, queried as pandas, Arrow or SQL.

Tables are read lazily: a warm re-open touches only ``meta.json`` per rank; a table's Parquet
files are read (memory-mapped) the first time it is asked for, and SQL runs in DuckDB directly
over the Parquet files, so only the columns a query needs are read.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from . import diagnostics as dg
from . import hooks
from .errors import ProfileError, UnknownTable
from .schema import TABLES, conform
from .store.loader import LoadedRank
from .store.results import KeyLocks, Results

if TYPE_CHECKING:  # pandas and DuckDB load on first use: a warm re-open needs neither
    import duckdb
    import pandas as pd


class Profile:
    """One run (one or more ranks) of one collection.

    >>> p = profinsight.load("rank0_ascend_pt")
    >>> p.table("device_tasks")            # pandas DataFrame, nullable dtypes, times in ns
    >>> p.sql("select kind, count(*) from device_tasks group by kind")
    """

    def __init__(self, run, ranks: list[LoadedRank], run_notes: list[dg.Diagnostic]):
        self.run = run
        self._ranks = ranks
        self._arrow: dict[str, pa.Table] = {}
        self._arrow_locks = KeyLocks()
        self._con = None
        self._con_lock = threading.Lock()
        #: the tables SQL reads as registered Arrow (not Parquet views): a cursor registers them again
        self._registered: list[str] = []
        #: per thread of :meth:`parallel`: the cursor its SQL goes through
        self._local = threading.local()
        self._diagnostics = [d for r in ranks for d in _with_rank(r.diagnostics, r.rank)] + run_notes
        #: analysis results by (name, parameters), in memory and beside the Parquet cache
        #: (:mod:`profinsight.store.results`): each analysis runs once per profile and parameters
        self._results = Results.for_profile(ranks, run, run_notes)
        #: the run entry that holds every rank's tables, whole and in this order, or None
        self._shared = _whole_entry(ranks)

    # --- what was loaded -------------------------------------------------------------
    @property
    def ranks(self) -> list[int]:
        """Rank ids, sorted."""
        return sorted(r.rank for r in self._ranks)

    @property
    def format(self) -> str:
        return self.run.format

    @property
    def path(self) -> Path:
        return Path(self.run.root)

    @property
    def diagnostics(self) -> list[dg.Diagnostic]:
        """What the doctor found while loading (severity info / warning / error)."""
        return list(self._diagnostics)

    def row_counts(self) -> dict[str, int]:
        """Rows per canonical table over all ranks (no table is read to answer this)."""
        return {name: sum(r.row_count(name) for r in self._ranks) for name in TABLES}

    @cached_property
    def steps(self) -> list[int]:
        t = self.arrow("steps")
        return sorted(set(v for v in t.column("step").to_pylist() if v is not None))

    # --- tables ----------------------------------------------------------------------
    def arrow(self, name: str) -> pa.Table:
        """Canonical table ``name`` as one Arrow table over all ranks."""
        if name not in TABLES:
            raise UnknownTable(f"no table named {name!r}", fix=f"tables: {', '.join(TABLES)}")
        with self._arrow_locks(name):
            if name not in self._arrow:
                if self._shared is not None:  # every rank in one run entry: its table as it is
                    table = self._shared.read(name)
                else:
                    parts = [r.read(name) for r in self._ranks]
                    table = pa.concat_tables(parts, promote_options="permissive") if parts else None
                self._arrow[name] = conform(name, table)
            return self._arrow[name]

    def table(self, name: str) -> pd.DataFrame:
        """Canonical table ``name`` as a pandas DataFrame with nullable dtypes (integer ns stay
        exact; nulls are ``<NA>``, never NaN-converted floats)."""
        return to_pandas(self.arrow(name))

    def sql(self, query: str) -> pd.DataFrame:
        """Run DuckDB SQL over the canonical tables (each is a view by its name)."""
        import duckdb
        import pandas as pd

        try:
            rel = self.connection().sql(query)
            return pd.DataFrame() if rel is None else to_pandas(rel.to_arrow_table())
        except duckdb.Error as exc:
            raise ProfileError(f"SQL error: {exc}", fix=f"tables: {', '.join(TABLES)}") from None

    def connection(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection with one view per canonical table (in a thread of
        :meth:`parallel`: that thread's own cursor of it)."""
        cursor = getattr(self._local, "con", None)
        if cursor is not None:
            return cursor
        with self._con_lock:
            if self._con is None:
                import duckdb

                con = duckdb.connect(":memory:", config={"threads": 2, "autoinstall_known_extensions": False})
                _quiet(con)
                # a rank this process imported and kept (store.loader's ``keep``) is read where it
                # is: its scans cost no Parquet decoding
                held = any(r.tables is not None for r in self._ranks)
                for name in TABLES:
                    files = None if held else self.parquet_files(name)
                    if files:
                        lst = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
                        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{lst}], union_by_name=true)")
                    else:
                        con.register(name, self.arrow(name))
                        self._registered.append(name)
                self._con = con
            return self._con

    @contextmanager
    def parallel(self, workers: int = 2) -> Iterator:
        """A thread pool for work on this profile from several threads at once (the advisor's
        rules): each thread's SQL goes through a cursor of its own (a DuckDB connection is not
        for two threads at a time; a cursor shares its database, so the same views), and
        analyses and tables are computed once whichever thread asks first
        (:class:`~profinsight.store.results.KeyLocks`).  DuckDB, Arrow and most of NumPy run
        without the GIL, so two threads use two cores."""
        from concurrent.futures import ThreadPoolExecutor

        con = self.connection()
        cursors = []
        for _ in range(workers):  # made here: the pool's threads only take one each
            cur = con.cursor()
            _quiet(cur)
            for name in self._registered:
                cur.register(name, self.arrow(name))
            cursors.append(cur)
        free = list(cursors)
        lock = threading.Lock()

        def take() -> None:
            with lock:
                self._local.con = free.pop()

        try:
            with ThreadPoolExecutor(workers, initializer=take) as pool:
                yield pool
        finally:
            for cur in cursors:
                cur.close()

    def parquet_files(self, name: str) -> list[Path] | None:
        """The cached Parquet files that hold table ``name`` (one per rank), or None when some
        rank is held in memory only (then SQL reads the Arrow table)."""
        if self._shared is not None:
            return [self._shared.table_path(name)]
        files = [r.parquet_path / f"{name}.parquet" for r in self._ranks if r.parquet_path]
        return files if files and len(files) == len(self._ranks) else None

    def run_info(self) -> pd.DataFrame:
        return self.table("run_info")

    # --- analyses (one method per registered analysis) ---------------------------------
    def remember(self, name: str, params: dict, compute, func=None):
        """Plain data (JSON-able) that ``compute()`` derives from this profile, computed once per
        ``name`` and ``params`` (and ``func``'s code) and cached beside the profile's tables; what
        comes back is what reads back from JSON, on the first call too.  The advisor keeps its
        findings (rule ids and values, never words) this way."""
        return self._results.data(name, params, compute, func)

    def remember_frame(self, name: str, params: dict, compute, func=None) -> pd.DataFrame:
        """A DataFrame that ``compute()`` derives from this profile (an analysis' building block
        that is not itself registered), computed once per ``name``, ``params`` and ``func``'s code
        and cached beside the profile's tables like the registered analyses' results."""
        return self._results.frame(name, params, compute, func)

    def view(self, name: str, **params) -> pd.DataFrame:
        """Run registered analysis ``name`` (same as ``p.<name>(**params)``)."""
        from .registry import get

        return get(name).run(self, **params)

    def analyses(self) -> list[str]:
        from .registry import all_analyses

        return sorted(all_analyses())

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        from .registry import all_analyses

        reg = all_analyses()
        if name in reg:
            a = reg[name]

            def method(**params):
                return a.run(self, **params)

            method.__name__ = name
            method.__doc__ = a.doc
            return method
        raise AttributeError(f"'Profile' has no attribute {name!r}")

    def __dir__(self):
        from .registry import all_analyses

        return sorted(set(super().__dir__()) | set(all_analyses()))

    # --- display ---------------------------------------------------------------------
    def summary(self) -> dict:
        """Plain data describing what was loaded (rendered by repr, HTML and the CLI)."""
        counts = self.row_counts()
        info = self.arrow("run_info").to_pylist()
        return {
            "path": str(self.path),
            "format": self.format,
            "ranks": self.ranks,
            "level": self.run.level,
            "steps": self.steps,
            "devices": sorted({r["device"] for r in info if r.get("device") is not None}),
            "device_names": sorted({r["device_name"] for r in info if r.get("device_name")}),
            "tables": counts,
            "diagnostics": {s: sum(1 for d in self._diagnostics if d.severity == s) for s in dg.SEVERITIES},
        }

    def __repr__(self) -> str:
        s = self.summary()
        rows = ", ".join(f"{k}={v}" for k, v in s["tables"].items() if v)
        diag = ", ".join(f"{v} {k}" for k, v in s["diagnostics"].items() if v) or "none"
        # a rank that failed to load comes first: an empty profile must not read as a quiet one
        failed = "".join(
            f"  IMPORT FAILED{f' rank {d.rank}' if d.rank is not None else ''}: {d.code}: {d.message}\n"
            for d in self._diagnostics
            if d.severity == "error"
        )
        return (
            f"<Profile {s['format']} {s['path']} ranks={s['ranks']} steps={s['steps']}\n"
            f"{failed}  rows: {rows}\n  diagnostics: {diag}>"
        )

    def _repr_html_(self) -> str:
        draw = hooks.get("profile_html")
        return draw(self) if draw is not None else f"<pre>{html.escape(repr(self))}</pre>"

    def show(self, view: str | None = None) -> None:
        """Open this profile in the profinsight viewer tab of JupyterLab, from a notebook cell
        (``view``: the first view, e.g. ``"timeline"``).  Without the JupyterLab extension the
        summary renders inline; outside a notebook it is printed.  The Jupyter layer does the
        opening (:mod:`profinsight.jupyter.show`), lent through :mod:`profinsight.hooks`."""
        opener = hooks.get("show")
        if opener is None:
            print(repr(self))
            print(f"To browse it: profinsight serve {self.path}")
            return
        opener(self, view)

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = hooks.get("profile_bundle")
        if bundle is not None:
            return bundle(self)
        return {"text/html": self._repr_html_(), "text/plain": repr(self)}


def _whole_entry(ranks):
    """The run entry (:mod:`.store.run_cache`) when ``ranks`` are exactly its ranks in its order,
    else None (then each rank is read on its own)."""
    entry = ranks[0].shared if ranks else None
    if entry is None or len(ranks) != len(entry.ranks):
        return None
    if all(r.shared is entry and r.position == i for i, r in enumerate(ranks)):
        return entry
    return None


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """Arrow -> pandas with nullable dtypes so that int64 ns and nulls survive."""
    return table.to_pandas(types_mapper=_pandas_types().get)


_TYPES: dict = {}


def _pandas_types() -> dict:
    if not _TYPES:
        import pandas as pd

        _TYPES.update(
            {
                pa.int64(): pd.Int64Dtype(),
                pa.int32(): pd.Int32Dtype(),
                pa.float64(): pd.Float64Dtype(),
                pa.bool_(): pd.BooleanDtype(),
                pa.string(): pd.StringDtype(),
                pa.large_string(): pd.StringDtype(),
            }
        )
    return _TYPES


def _quiet(con) -> None:
    """No DuckDB progress bar on the user's stderr."""
    import duckdb

    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error:
        pass  # in a Jupyter kernel without ipywidgets DuckDB refuses the SET; its bar is off there


def _with_rank(diags, rank):
    for d in diags:
        yield d if d.rank is not None else dg.Diagnostic(d.severity, d.code, d.message, d.file, d.fix, rank)
