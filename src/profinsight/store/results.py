"""Analysis results, computed once per profile and parameters and kept beside the Parquet cache.

Why: the tables of a cached profile re-open in well under a second, but the analyses over them
(idle gaps, attribution trees, the advisor's rules) cost seconds on a GB-scale profile, and
``analyze``, ``report``, ``compare``, ``view``, the server and the MCP tools ask for the same
ones again and again.  A result is a pure function of the profile's tables, the parameters and
the code that computed it, so it is cached under exactly those three:

* **the profile** — the cache keys of its ranks' Parquet entries (they hash every source file's
  path, size and mtime, the importer and schema versions), in load order, plus the run's format,
  level, root and load notes.  A changed source file gives its rank a new entry, so a new profile
  key: a result of a profile that changed is never served.
* **the code** — :data:`RESULTS_VERSION` (the layout of these files), the package version, and a
  fingerprint of the engine's source files (path, size and mtime of every module below the
  surfaces), so an edited analysis or rule recomputes without anyone remembering to bump a number.
  The function itself is also named in each key (module, name and a hash of its bytecode).
* **the parameters** — every bound parameter, defaults filled, as canonical JSON.

Only results are cached, never a rendered page or text: the advisor keeps its findings as rule
ids and values, and every surface words and draws them again in the language asked for.

Layout: ``<first rank's entry>/results-<code>/<profile key>/<name>-<key>.arrow`` (an Arrow IPC
file, memory-mapped on read) or ``.json``.  Living inside a rank's entry, results go when the
entry goes; folders of older code are removed when a newer one is written.  Each file is written
to a temporary name and renamed into place, so a reader sees all of it or nothing.  A profile
held in memory (cache off, an unwritable cache, a failed import) keeps its results in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._version import __version__

#: layout of the result files; bump when what a file holds or how it is named changes
RESULTS_VERSION = 1

#: packages whose code never changes a result (they only show results): left out of the code
#: fingerprint, so editing a surface keeps the results of every profile
_SURFACES = frozenset({"cli", "server", "jupyter", "agents", "render", "collection", "labextension", "samples"})
_PACKAGE = Path(__file__).resolve().parents[1]

_fingerprint: str | None = None


def code_fingerprint() -> str:
    """A hash of the engine's code: the package version and the path, size and mtime of every
    module below the surfaces (about 200 ``stat`` calls, a few ms; computed once per process)."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"{RESULTS_VERSION}|{__version__}".encode())
        for path in sorted(_engine_files(_PACKAGE)):
            try:
                st = os.stat(path)
            except OSError:
                continue
            h.update(f"|{os.path.relpath(path, _PACKAGE)}|{st.st_size}|{st.st_mtime_ns}".encode())
        _fingerprint = h.hexdigest()[:16]
    return _fingerprint


def _engine_files(root: Path) -> list[str]:
    out = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name in _SURFACES and folder == str(root) or e.name.startswith((".", "__pycache__")):
                    continue
                stack.append(e.path)
            elif e.name.endswith(".py") and not (folder == str(root) and e.name in ("api.py", "testing.py")):
                out.append(e.path)
    return out


def function_key(func: Callable) -> str:
    """Which function computed a result: its module, name and bytecode (a hash), so a function
    replaced at run time (a monkeypatch, a re-registration) never reads another's results."""
    code = getattr(func, "__code__", None)
    body = hashlib.sha256(marshal.dumps(code)).hexdigest()[:12] if code is not None else "?"
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}:{body}"


def _engine_code(func: Callable | None) -> bool:
    """Whether ``func`` is profinsight's own code, which the code fingerprint covers.  An analysis
    a user registers in a notebook may call helpers whose changes no key can see: its results stay
    in memory, for this process only."""
    return func is None or str(getattr(func, "__module__", "")).split(".")[0] == "profinsight"


def profile_key(ranks, run=None, notes=()) -> str | None:
    """The key of a loaded profile, from its ranks' cache entries (load order) and the run; None
    when some rank is held in memory only (its tables have no key)."""
    h = hashlib.sha256(f"results {RESULTS_VERSION}".encode())
    for r in ranks:
        folder = r.entry_folder
        if folder is None:
            return None
        h.update(f"|{Path(folder).name}:{r.rank}".encode())
    if run is not None:
        h.update(f"|{run.format}|{run.level}|{run.root}".encode())
    for d in notes:
        h.update(f"|{d.severity}:{d.code}:{d.rank}:{d.message}".encode())
    return h.hexdigest()[:24]


def canonical(params: dict) -> str | None:
    """``params`` as canonical JSON (sorted keys), or None when a value is not plain data (then
    the result is not cached: two such values could not be told apart on disk)."""
    try:
        return json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=True)
    except (TypeError, ValueError):
        return None


class KeyLocks:
    """One lock per key: the first thread that asks for a key computes its value while the others
    that ask for the same key wait for it (the advisor runs its rules on several threads, and two
    rules often need the same analysis).  Keys must not form a cycle (an analysis never needs
    itself), so nested keys cannot deadlock."""

    def __init__(self):
        self._locks: dict = {}
        self._guard = threading.Lock()

    def __call__(self, key) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock


class Results:
    """The results of one profile: in memory for this process, and on disk when ``folder`` is
    given (a profile whose ranks are all in the Parquet cache)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self._memory: dict = {}
        #: (hits, misses, writes) — read by tests and the benchmark
        self.stats = {"memory": 0, "disk": 0, "computed": 0, "written": 0}
        self._locks = KeyLocks()
        self._count_lock = threading.Lock()
        self._trim_lock = threading.Lock()

    def _count(self, what: str) -> None:
        with self._count_lock:
            self.stats[what] += 1

    def _lock(self, mkey):
        return contextlib.nullcontext() if mkey is None else self._locks(mkey)

    # --- a plain in-memory mapping as well: code that keeps its own per-profile values here
    # (``profile._results[key] = value``) gets the dict it expects, in memory only
    def __contains__(self, key) -> bool:
        return key in self._memory

    def __getitem__(self, key):
        return self._memory[key]

    def __setitem__(self, key, value) -> None:
        self._memory[key] = value

    @classmethod
    def for_profile(cls, ranks, run=None, notes=()) -> Results:
        key = profile_key(ranks, run, notes)
        if key is None or not ranks:
            return cls(None)
        return cls(Path(ranks[0].entry_folder) / f"results-{code_fingerprint()}" / key)

    def memo(self, key: tuple, compute: Callable[[], Any], keep: int | None = None):
        """A value ``compute()`` derives from the profile, kept in memory only (never on disk) and
        computed once per ``key`` whichever thread asks first: the building blocks that several
        analyses share (the attribution of one set of tasks for ``module_time`` and ``code_time``).
        ``keep``: at most that many values of the same kind (``key[0]``) stay, the latest ones —
        a server that answers many filters of one profile must not hold a value per filter."""
        key = ("memo", *key)
        with self._locks(key):
            if key not in self._memory:
                self._memory[key] = compute()
                if keep is not None:
                    with self._trim_lock:
                        same = [k for k in list(self._memory) if isinstance(k, tuple) and k[:2] == key[:2]]
                        for old in same[: max(len(same) - keep, 0)]:
                            self._memory.pop(old, None)
            return self._memory[key]

    # --- tables (analyses' DataFrames) ---------------------------------------------------------
    def frame(self, name: str, params: dict, compute: Callable[[], Any], func: Callable | None = None):
        """The DataFrame ``compute()`` returns for analysis ``name`` with ``params``: from memory,
        else from disk, else computed (and written when it reads back identical)."""
        mkey, stem = self._key(name, params, func)
        with self._lock(mkey):
            if mkey is not None and mkey in self._memory:
                self._count("memory")
                return self._memory[mkey]
            df = self._read_frame(stem) if stem else None
            if df is not None:
                self._count("disk")
            else:
                df = compute()
                self._count("computed")
                if stem:
                    self._write_frame(stem, df)
            if mkey is not None:
                self._memory[mkey] = df
            return df

    def _read_frame(self, stem: str):
        path = self.folder / f"{stem}.arrow"
        if not path.is_file():
            return None
        try:
            import pyarrow as pa

            with pa.memory_map(str(path)) as src:
                table = pa.ipc.open_file(src).read_all()
            return _to_frame(table)
        except Exception:  # noqa: BLE001 - a damaged or foreign file is a miss; the next write replaces it
            return None

    def _write_frame(self, stem: str, df) -> None:
        """Write ``df`` as Arrow IPC, but only when it reads back exactly (same columns, dtypes,
        index and values): a result Arrow cannot hold as it is stays in memory, never changed on
        disk."""
        try:
            import pyarrow as pa

            table = pa.Table.from_pandas(df, preserve_index=None)
            objects = _object_columns(df)
            if objects is None:
                return
            meta = dict(table.schema.metadata or {})
            meta[_OBJECTS] = json.dumps(objects).encode()
            table = table.replace_schema_metadata(meta)
            if not _same_frame(df, _to_frame(table)):
                return
        except Exception:  # noqa: BLE001 - an unconvertible result is simply not cached
            return

        def write(tmp: Path) -> None:
            with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)

        self._write(f"{stem}.arrow", write)

    # --- plain data (JSON) ---------------------------------------------------------------------
    def data(self, name: str, params: dict, compute: Callable[[], Any], func: Callable | None = None):
        """The plain data (dicts, lists, numbers, strings) ``compute()`` returns, as it reads back
        from JSON — also when just computed, so a first run and a cached run give identical
        output."""
        mkey, stem = self._key(name, params, func)
        with self._lock(mkey):
            if mkey is not None and mkey in self._memory:
                self._count("memory")
                return json.loads(self._memory[mkey])
            text = None
            if stem:
                try:
                    text = (self.folder / f"{stem}.json").read_text(encoding="utf-8")
                    json.loads(text)
                    self._count("disk")
                except (OSError, ValueError):
                    text = None
            if text is None:
                text = json.dumps(compute(), ensure_ascii=False, allow_nan=True, default=_plain)
                self._count("computed")
                if stem:
                    body = text.encode("utf-8")
                    self._write(f"{stem}.json", lambda tmp: tmp.write_bytes(body))
            if mkey is not None:
                self._memory[mkey] = text
            return json.loads(text)

    # --- keys and files ------------------------------------------------------------------------
    def _key(self, name: str, params: dict, func: Callable | None) -> tuple[tuple | None, str | None]:
        args = canonical(params)
        if args is None:
            return None, None
        fkey = function_key(func) if func is not None else ""
        mkey = (name, args, fkey)
        if self.folder is None or not _engine_code(func):
            return mkey, None
        digest = hashlib.sha256(f"{name}|{args}|{fkey}".encode()).hexdigest()[:20]
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:40]
        return mkey, f"{safe}-{digest}"

    def _write(self, filename: str, write: Callable[[Path], None]) -> None:
        folder = self.folder
        try:
            fresh = not folder.is_dir()
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".tmp-{filename}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            try:
                write(tmp)
                os.replace(tmp, folder / filename)
                self._count("written")
            finally:
                if tmp.exists():
                    tmp.unlink()
            if fresh:
                _drop_other_code(folder.parent)
        except OSError:
            pass  # a read-only cache: the result stays in memory


def _drop_other_code(code_folder: Path) -> None:
    """Remove the result folders that older (or newer) code wrote beside this one."""
    entry = code_folder.parent
    try:
        for old in entry.glob("results-*"):
            if old.name != code_folder.name and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        pass


#: schema metadata: the columns that were Python objects (strings with None for missing) in the
#: result; Arrow reads them back as pandas' string dtype, so they are turned back into objects
_OBJECTS = b"profinsight.object_columns"


def _object_columns(df) -> dict | None:
    """Per column of Python objects, what stands for a missing value in it (``none`` or
    ``nan``); None when a column mixes both (it could not be read back as it was)."""
    out = {}
    for c, dtype in df.dtypes.items():
        if dtype != object:  # noqa: E721 - numpy's object dtype
            continue
        col = df[c]
        kinds = {type(v) for v in col[col.isna()]}
        if kinds <= {type(None)}:
            out[str(c)] = "none"
        elif kinds <= {float}:
            out[str(c)] = "nan"
        else:
            return None
    return out


def _to_frame(table):
    df = table.to_pandas()
    objects = json.loads((table.schema.metadata or {}).get(_OBJECTS, b"{}"))
    if objects:
        import pandas as pd

        for c, missing in objects.items():
            values = table.column(c).to_pylist()
            if missing == "nan":
                values = [float("nan") if v is None else v for v in values]
            df[c] = pd.Series(values, dtype=object, index=df.index)
    return df


def _same_frame(a, b) -> bool:
    """Exactly the same frame: columns, dtypes, index, values, and None vs NaN in object columns.

    Column by column with pandas' own exact comparisons (NaN equal to NaN, None not equal to
    NaN); ``assert_frame_equal`` gives the same answer but took 0.06-0.08 s of a cold
    ``analyze`` on the idle gaps of a 100 MB trace (29 k rows).  A column of another kind
    (categorical, dates) is left to ``assert_frame_equal``."""
    fast = _same_columns(a, b)
    if fast is not None:
        return fast
    from pandas.testing import assert_frame_equal

    try:
        assert_frame_equal(a, b, check_exact=True, check_column_type=True, check_index_type=True)
        return True
    except (AssertionError, TypeError, ValueError):
        return False


def _same_columns(a, b) -> bool | None:
    """:func:`_same_frame` for frames whose columns are all numbers, booleans, Python objects,
    strings or masked numbers (Int64, Float64, boolean); None for any other frame (the caller
    compares it)."""
    import numpy as np
    import pandas as pd
    from pandas.core.arrays.masked import BaseMaskedArray
    from pandas.core.dtypes.missing import array_equivalent

    def simple(col) -> bool:
        if isinstance(col.dtype, np.dtype):
            return col.dtype.kind in "biufO"
        return isinstance(col.dtype, pd.StringDtype) or isinstance(col.array, BaseMaskedArray)

    if not (a.columns.identical(b.columns) and a.index.identical(b.index) and a.flags == b.flags):
        return False
    if a.columns.has_duplicates or not all(simple(a[c]) for c in a.columns):
        return None
    try:
        for c in a.columns:
            x, y = a[c], b[c]
            if x.dtype != y.dtype:
                return False
            if isinstance(x.dtype, np.dtype):
                same = array_equivalent(x.to_numpy(), y.to_numpy(), strict_nan=True, dtype_equal=True)
            else:
                same = x.array.equals(y.array)
            if not same:
                return False
    except (TypeError, ValueError):
        return None
    return True


def _plain(o):
    """JSON for the values analyses hand back beside Python's own: numpy scalars, pandas' NA."""
    item = getattr(o, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    if o is None or type(o).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)
