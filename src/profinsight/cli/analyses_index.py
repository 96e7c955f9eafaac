"""The registered analyses and their parameters as ``view list``, ``view --list`` and
``view --help`` show them, read from ``analyses.json`` beside this file so that those answer
without importing the analyses (and with them pandas, DuckDB and pyarrow).

The file is a copy of the registry, written by ``python -m profinsight.cli.analyses_index``;
``tests/surfaces/test_cli_startup.py`` fails when it differs from the live registry, so an
analysis added or changed without regenerating it is caught.
"""

from __future__ import annotations

import json
from pathlib import Path

INDEX = Path(__file__).with_name("analyses.json")


def entries() -> dict[str, dict]:
    """``{name: {"title": ..., "params": [{"name", "type", "default", "choices", "help"}]}}``."""
    return json.loads(INDEX.read_text(encoding="utf-8"))


def from_registry() -> dict[str, dict]:
    """The same, from the live registry (imports every analysis)."""
    from ..registry import all_analyses

    return {
        name: {
            "title": a.title,
            "params": [
                {
                    "name": p.name,
                    "type": p.type.__name__,
                    "default": p.default,
                    "choices": list(p.choices) if p.choices is not None else None,
                    "help": p.help,
                }
                for p in a.params
            ],
        }
        for name, a in sorted(all_analyses().items())
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


if __name__ == "__main__":  # pragma: no cover - the maintainer's command
    INDEX.write_text(render(from_registry()), encoding="utf-8")
    print(f"wrote {INDEX}")
