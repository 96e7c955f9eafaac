"""The experiment name index: which profile a registered run's name stands for.

``load("baseline")`` and every CLI PATH resolve a name that is not an existing path through
:func:`resolve_name`; that lookup belongs to storage, below the facade, so ``load`` never imports
the collection code that writes the record (:mod:`profinsight.collection.registry`, which adds
rows through :func:`connect`).  One SQLite file, ``experiments.db``, in the experiments folder.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

DB_NAME = "experiments.db"
DEFAULT_FOLDER = "profinsight-experiments"
ENV_FOLDER = "PROFINSIGHT_EXPERIMENTS"
_JSON_COLUMNS = ("tags", "params", "versions", "env")


def experiments_folder(folder=None) -> Path:
    """``folder``, else ``$PROFINSIGHT_EXPERIMENTS``, else ``./profinsight-experiments``."""
    if folder is not None:
        return Path(folder).expanduser()
    env = os.environ.get(ENV_FOLDER)
    return Path(env).expanduser() if env else Path.cwd() / DEFAULT_FOLDER


def connect(folder=None, *, create: bool, schema: str | None = None) -> sqlite3.Connection | None:
    """The index's connection; None when it does not exist and ``create`` is false.  The
    writer passes its ``schema`` to create the table."""
    root = experiments_folder(folder)
    db = root / DB_NAME
    if not db.exists():
        if not create:
            return None
        root.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db, timeout=30)
    con.row_factory = sqlite3.Row
    if create and schema:
        con.executescript(schema)
    return con


def _decode(row: sqlite3.Row) -> dict:
    out = dict(row)
    for k in _JSON_COLUMNS:
        try:
            out[k] = json.loads(out[k]) if out.get(k) else ([] if k == "tags" else {})
        except ValueError:
            pass
    if out.get("git_dirty") is not None:
        out["git_dirty"] = bool(out["git_dirty"])
    return out


def rows(folder=None) -> list[dict]:
    """Every registered run, oldest first."""
    con = connect(folder, create=False)
    if con is None:
        return []
    try:
        return [_decode(r) for r in con.execute("select * from experiments order by id")]
    except sqlite3.DatabaseError:
        return []
    finally:
        con.close()


def get(name_or_id, folder=None) -> dict | None:
    """The latest run registered under ``name`` (or the row with that integer id)."""
    con = connect(folder, create=False)
    if con is None:
        return None
    try:
        if isinstance(name_or_id, int):
            r = con.execute("select * from experiments where id = ?", (name_or_id,)).fetchone()
        else:
            r = con.execute(
                "select * from experiments where name = ? order by id desc limit 1", (str(name_or_id),)
            ).fetchone()
        return _decode(r) if r else None
    except sqlite3.DatabaseError:
        return None
    finally:
        con.close()


def resolve_name(path) -> str | None:
    """The registered path for ``path`` when it does not exist but names an experiment (the CLI's
    and ``load``'s name resolution); None otherwise.  Never raises."""
    try:
        if isinstance(path, Path) or not isinstance(path, str) or not path or Path(path).exists():
            return None
        row = get(path)
        return row["path"] if row else None
    except Exception:  # noqa: BLE001 - resolution is a convenience; the normal error follows
        return None
