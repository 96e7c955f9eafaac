"""The tool catalogue: one tool per registered analysis, generated from its registration, plus
the fixed tools (discover, load, doctor, compare, ranks, timeline_window, search_slices, sql,
viewer_link).  Plain data, no MCP import: the server turns each :class:`Tool` into an SDK tool,
and docs/agents.md lists :func:`catalogue` (a test keeps the page in step).

An analysis tool is named like the analysis, takes ``path`` (a profile path, a registered
experiment's name, or the ``profile_id`` that ``load`` returned), the analysis's own parameters
with their names, types, defaults and allowed values, and ``max_rows``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..registry import Analysis, all_analyses
from .tables import DEFAULT_ROWS, MAX_ROWS

REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    name: str
    type: Any  # int, float, str, bool, dict, list
    default: Any = REQUIRED
    choices: tuple | None = None
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: tuple[Arg, ...]
    #: (session, **arguments) -> JSON-able dict
    call: Callable[..., dict]
    #: the analysis it runs, for generated tools
    analysis: str | None = None


PATH = Arg(
    "path",
    str,
    help="a profile path (under the server's roots), a registered experiment name, or a profile_id from load",
)
MAX_ROWS_ARG = Arg("max_rows", int, DEFAULT_ROWS, help=f"rows in the answer (at most {MAX_ROWS}); the rest are counted")


def analysis_tool(a: Analysis) -> Tool:
    """The tool of one registered analysis (no code per analysis)."""
    args = (PATH,) + tuple(Arg(p.name, p.type, p.default, p.choices, p.help) for p in a.params) + (MAX_ROWS_ARG,)
    cols = "; ".join(f"{k}: {v}" for k, v in a.columns.items())
    desc = f"{a.title}. {a.doc}" + (f"\n\nColumns: {cols}" if cols else "")
    names = tuple(p.name for p in a.params)

    def call(session, path, max_rows=DEFAULT_ROWS, **given):
        params = {k: v for k, v in given.items() if k in names and v is not None}
        return session.analysis(a.name, path, params, max_rows)

    return Tool(a.name, a.title, desc, args, call, analysis=a.name)


def fixed_tools() -> list[Tool]:
    def t(name, title, desc, args, call):
        return Tool(name, title, desc, tuple(args), call)

    return [
        t(
            "discover",
            "Runs under a folder",
            "The runs (profiles) under a folder, as discovery sees them, without importing any: id, "
            "format, level, ranks, size, whether the cache is warm, a doctor status. Without a path: "
            "every root the server may read.",
            [Arg("path", str, None, help="a folder under the server's roots (default: all roots)")],
            lambda s, path=None: s.discover(path),
        ),
        t(
            "load",
            "Load a profile",
            "Load one run (imported once, then read from the cache) and return its profile_id, ranks, "
            "steps, rows per table and the doctor's diagnostics. Pass the profile_id to every other tool.",
            [PATH],
            lambda s, path: s.load(path),
        ),
        t(
            "doctor",
            "Diagnostics of a profile",
            "Every problem found while loading (missing or empty files and the views they disable, "
            "collection switches that were off, truncated files, version mismatches), worst first, each "
            "with the file and the fix.",
            [PATH],
            lambda s, path: s.doctor(path),
        ),
        t(
            "compare",
            "Compare runs",
            "Baseline vs changed runs (a series base -> opt1 -> ...): step times, the waterfall of what "
            "changed by kernel type, op changes, verdicts. Times in us.",
            [
                Arg("base", str, help="the baseline run (path or profile_id)"),
                Arg("others", list, help="the changed run(s) (paths or profile_ids)"),
                MAX_ROWS_ARG,
            ],
            lambda s, base, others, max_rows=DEFAULT_ROWS: s.compare(base, others, max_rows),
        ),
        t(
            "ranks",
            "Ranks report",
            "Per-rank summary of a multi-rank run: slow ranks (median absolute deviations from the "
            "median), imbalance, slow links and a verdict.",
            [
                PATH,
                Arg("threshold", float, 3.0, help="MADs from the median that make a rank slow"),
                Arg("min_share", float, 0.02, help="smallest share of the step a difference must reach"),
                MAX_ROWS_ARG,
            ],
            lambda s, path, threshold=3.0, min_share=0.02, max_rows=DEFAULT_ROWS: s.ranks(
                path, threshold, min_share, max_rows
            ),
        ),
        t(
            "timeline_window",
            "Timeline window",
            "The slices of one rank between start_ns and end_ns (ns relative to the timeline origin; "
            "default the whole run) as the viewer draws them at `resolution` pixels: one row per slice "
            "at least a pixel long, shorter ones merged per track and pixel (merged, count).",
            [
                PATH,
                Arg("rank", int, None, help="rank (default: the first)"),
                Arg("start_ns", int, None, help="window start, ns from the timeline origin"),
                Arg("end_ns", int, None, help="window end, ns from the timeline origin"),
                Arg("resolution", int, 200, help="pixels across the window (1..20000)"),
                MAX_ROWS_ARG,
            ],
            lambda s, path, rank=None, start_ns=None, end_ns=None, resolution=200, max_rows=DEFAULT_ROWS: (
                s.timeline_window(path, rank, start_ns, end_ns, resolution, max_rows)
            ),
        ),
        t(
            "search_slices",
            "Search the timeline",
            "Slices whose name contains `name` (any case), in time order, with track, rank, start "
            "(ns from the timeline origin) and duration; `total` counts every match.",
            [PATH, Arg("name", str, help="text the slice name contains"), Arg("limit", int, 20, help="hits to return")],
            lambda s, path, name, limit=20: s.search_slices(path, name, limit),
        ),
        t(
            "sql",
            "Read-only SQL",
            "One DuckDB SELECT over the canonical tables (device_tasks, host_ops, launches, steps, "
            "memory_samples, memory_blocks, module_memory, comm_ops, comm_links, api_calls, counters, "
            "trace_slices, run_info; times in integer ns, sizes in bytes). Anything but a single SELECT "
            "is refused; the query is stopped after timeout_s.",
            [
                PATH,
                Arg("query", str, help="one SELECT statement"),
                MAX_ROWS_ARG,
                Arg("timeout_s", float, 10.0, help="seconds before the query is stopped (at most 60)"),
            ],
            lambda s, path, query, max_rows=DEFAULT_ROWS, timeout_s=10.0: s.sql(path, query, max_rows, timeout_s),
        ),
        t(
            "viewer_link",
            "Open in the viewer",
            "A URL that opens the profinsight viewer (standalone `profinsight serve` or JupyterLab, as "
            "given when this server started) at a finding's evidence window (`rule`), at a window "
            "(start_ns/end_ns from the timeline origin), or at a view.",
            [
                PATH,
                Arg("rule", str, None, help="an advisor rule that fired (from advise): open at its evidence"),
                Arg("rank", int, None, help="rank to show"),
                Arg("start_ns", int, None, help="window start, ns from the timeline origin"),
                Arg("end_ns", int, None, help="window end, ns from the timeline origin"),
                Arg(
                    "view",
                    str,
                    "timeline",
                    ("overview", "operators", "timeline", "memory", "communication", "ranks", "compare", "analyses"),
                    help="the view to open",
                ),
            ],
            lambda s, path, rule=None, rank=None, start_ns=None, end_ns=None, view="timeline": s.viewer_link(
                path, rule, rank, start_ns, end_ns, view
            ),
        ),
    ]


def catalogue() -> list[Tool]:
    """Every tool: fixed ones first, then one per registered analysis, by name."""
    fixed = fixed_tools()
    taken = {t.name for t in fixed}
    generated = [analysis_tool(a) for name, a in sorted(all_analyses().items()) if name not in taken]
    return fixed + generated


_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", dict: "object", list: "array"}


def json_type(arg: Arg) -> str:
    return _JSON_TYPES.get(arg.type, "string")
