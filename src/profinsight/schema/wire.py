"""The JSON shapes that cross from Python to the viewer, declared once.

The analysis payload (``application/vnd.profinsight.analysis+json`` and ``GET
api/profiles/ID/analyses/NAME``), its chart spec, and the answers of the HTTP API
(docs/server.md) are declared here as TypedDicts; the viewer's TypeScript types in
``ts/app/generated/wire.ts`` are generated from them by ``python -m profinsight.schema.wire``
and a test fails when the committed file drifts from these declarations.

:class:`Chart` is how an analysis registration says it is best drawn; :meth:`Chart.spec` is its
form on the wire (:class:`ChartSpec`).

Times in timeline answers are nanoseconds relative to the answer's ``origin_ns`` (a string:
epoch nanoseconds exceed 2^53, the largest exact JavaScript number).
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, Union

#: any JSON value (the TypeScript side spells it as a recursive type)
Json = str | int | float | bool | None | list[Any] | dict[str, Any]

ChartKind = Literal["bar", "stacked", "line"]
Severity = Literal["info", "warning", "error"]
LoadState = Literal["idle", "loading", "loaded", "error"]
RowKind = Literal["slice", "counter"]


# --- analyses ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chart:
    """How a result is best drawn: ``kind`` bar | stacked | line; ``x`` the label/time column,
    ``y`` the value column(s)."""

    kind: str
    x: str
    y: tuple[str, ...]
    top: int = 15
    title: str = ""
    #: line charts: one line per distinct value of these columns (e.g. rank, component)
    series: tuple[str, ...] = ()

    def spec(self) -> ChartSpec:
        """The chart as it travels in an analysis payload and an analysis description."""
        return {
            "kind": self.kind,  # type: ignore[typeddict-item]
            "x": self.x,
            "y": list(self.y),
            "top": self.top,
            "title": self.title,
            "series": list(self.series),
        }


class _ChartSpecBase(TypedDict):
    kind: ChartKind
    #: the label column (bar, stacked) or the time column (line)
    x: str
    #: the value columns: bar draws the first, stacked all of them, line one line per column
    y: list[str]
    #: bars: how many rows are drawn
    top: int
    title: str


class ChartSpec(_ChartSpecBase, total=False):
    """A chart spec; ``series`` may be missing in outputs saved by earlier versions."""

    #: line charts: one line per distinct value of these columns
    series: list[str]


class _AnalysisPayloadBase(TypedDict):
    analysis: str | None
    title: str | None
    params: dict[str, Json]
    columns: list[str]
    dtypes: list[str]
    #: the rows of this page (a notebook output: the first 5000)
    rows: list[dict[str, Json]]
    #: rows of the whole result
    total_rows: int
    chart: ChartSpec | None


class AnalysisPayload(_AnalysisPayloadBase, total=False):
    """One analysis result: its schema, a page of its rows, and the chart its registration declares;
    answers of the HTTP route say which page (``offset``, ``limit``), notebook outputs do not."""

    #: index of the page's first row in the whole result
    offset: int
    #: the page size asked for (at most 5000)
    limit: int
    #: integer columns with values beyond 2^53 (epoch nanoseconds), their values as decimal text
    #: aligned with ``rows``: a JavaScript number cannot hold them, the table and its CSV export
    #: show these
    exact: dict[str, list[str | None]]


class ParamRule(TypedDict):
    """With its parameter at ``value``, parameter ``param`` must be one of ``allowed``."""

    value: Json
    param: str
    allowed: list[Json]


class ParamInfo(TypedDict):
    name: str
    #: the Python type name: int, float, str, bool
    type: str
    default: Json
    choices: list[Json] | None
    help: str
    #: pairs with other parameters that have no answer (a form does not offer them)
    requires: list[ParamRule]


class AnalysisInfo(TypedDict):
    """An analysis as its registration declares it (``GET api/profiles/ID/analyses``)."""

    name: str
    title: str
    doc: str
    chart: ChartSpec | None
    #: column -> meaning
    columns: dict[str, str]
    params: list[ParamInfo]


class AnalysesAnswer(TypedDict):
    analyses: list[AnalysisInfo]


# --- profiles ------------------------------------------------------------------------------
class _DiagnosticBase(TypedDict):
    severity: Severity
    code: str
    message: str


class Diagnostic(_DiagnosticBase, total=False):
    """What the doctor found (``Diagnostic.to_dict``)."""

    file: str | None
    fix: str | None
    rank: int | None


class ErrorAnswer(TypedDict):
    """How every route answers a failure (with the HTTP status): what is wrong, what to do."""

    error: str
    fix: str | None


class _ProfileInfoBase(TypedDict):
    id: str
    path: str
    format: str
    level: str | None
    ranks: list[int]
    steps: list[int]
    diagnostics: list[Diagnostic]
    loaded: bool
    error: ErrorAnswer | None


class ProfileInfo(_ProfileInfoBase, total=False):
    """A served profile (``GET api/profiles/ID``); ``tables`` (row counts) once it is loaded, and
    ``tier``: ``summary`` where its ranks were read from their own summaries (no trace parsed),
    ``full`` where their traces were imported."""

    tables: dict[str, int]
    tier: Literal["summary", "full"]


class ProfilesAnswer(TypedDict):
    profiles: list[ProfileInfo]


class ReadyAnswer(TypedDict):
    """The ranks of a run imported so far, while the others import (``GET api/profiles/ID/ready``)."""

    id: str
    ranks: list[int]
    #: step_breakdown of those ranks, from their own tasks (None before the first is ready)
    steps: AnalysisPayload | None


class VendorSummary(TypedDict):
    """The run's figures from the profiler's own summary files."""

    source: str
    files: list[str]
    steps: AnalysisPayload
    comm: AnalysisPayload


class LoadStatus(TypedDict):
    """Load state of a profile, answered without waiting for the load itself."""

    id: str
    state: LoadState
    #: cached | importing | reading | parsing | building | caching (importers.progress)
    stage: str | None
    #: ranks loaded so far, of ``total``
    done: int
    total: int
    elapsed_s: float
    #: bytes of the run's source files read so far (a streamed trace as it goes, the other
    #: files of a rank when the rank is done), of ``bytes_total``
    bytes_done: int
    bytes_total: int
    #: the file being read now (its name)
    file: str | None
    #: the ranks imported so far (ranks found in the cache are counted in ``done`` only)
    ranks_ready: list[int]
    background: BackgroundImport


class BackgroundImport(TypedDict):
    """The background full import of a summary-tier run: the ranks planned (most suspicious
    first) and those already in the cache (opening them is a warm read)."""

    ranks: list[int]
    done: list[int]


class OpenRankAnswer(TypedDict):
    """``GET api/profiles/ID/ranks/R``: the id under which rank R is served on its own, in full."""

    id: str
    rank: int


class SummaryAnswer(TypedDict):
    """A run before its import (``GET api/profiles/ID/summary``): what discovery saw and, where
    the profiler wrote them, its own step and communication summaries (no trace parsed)."""

    id: str
    format: str
    level: str | None
    ranks: list[int]
    rank_count: int
    files: int
    size_bytes: int
    #: ``{source: "vendor_summary", files: [...], steps: AnalysisPayload, comm: AnalysisPayload}``
    #: (step_breakdown and comm_summary of the summaries), or None where there are none
    vendor: VendorSummary | None
    vendor_error: str | None
    elapsed_s: float


class MessagesAnswer(TypedDict):
    """The viewer's labels (``ui.*`` keys of the message catalogue)."""

    lang: str
    languages: list[str]
    messages: dict[str, str]


class TablePage(TypedDict):
    """One page of a canonical table (``GET api/profiles/ID/tables/NAME``)."""

    table: str
    total_rows: int
    offset: int
    limit: int
    columns: list[str]
    dtypes: list[str]
    rows: list[dict[str, Json]]


# --- timeline ------------------------------------------------------------------------------
class TrackInfo(TypedDict):
    id: str
    name: str
    kind: RowKind
    source: str | None
    rows: int
    start_ns: int
    end_ns: int
    depth: int
    value_unit: str | None


class UnitInfo(TypedDict):
    name: str
    kind: str
    tracks: list[TrackInfo]


class RankTracks(TypedDict):
    rank: int
    units: list[UnitInfo]


class TrackTree(TypedDict):
    """``GET .../timeline/tracks``: rank -> unit -> track."""

    origin_ns: str
    start_ns: int
    end_ns: int
    ranks: list[RankTracks]


class _Window(TypedDict):
    """What every window answer repeats of its question."""

    origin_ns: str
    start_ns: int
    end_ns: int
    width: int
    px_ns: float
    rows: int


class SliceColumns(TypedDict):
    """One track of a slices answer: ``name`` indexes the answer's ``names``; ``id`` is -1 and
    ``merged`` 1 on rows that stand for several sub-pixel slices."""

    source: str | None
    depth: list[int]
    name: list[int]
    start_ns: list[int]
    dur_ns: list[int]
    id: list[int]
    count: list[int]
    merged: list[int]


class SlicesAnswer(_Window):
    """``GET .../timeline/slices``: a shared name dictionary plus per-track columns."""

    names: list[str]
    tracks: dict[str, SliceColumns]


class CounterBefore(TypedDict):
    """The last sample before the window (where the line enters it)."""

    ts_ns: int
    value: float


class _CounterColumnsBase(TypedDict):
    start_ns: list[int]
    end_ns: list[int]
    min: list[float]
    max: list[float]
    last: list[float]
    count: list[int]


class CounterColumns(_CounterColumnsBase, total=False):
    """One track of a counters answer: buckets with their min, max and last value."""

    before: CounterBefore


class CountersAnswer(_Window):
    """``GET .../timeline/counters``."""

    tracks: dict[str, CounterColumns]


class TimelineSlice(TypedDict):
    """One slice where it sits on the timeline (a selection, an arrow's end, a search hit)."""

    track: str
    kind: str
    rank: int
    id: int
    name: str
    start_ns: int
    dur_ns: int
    depth: int


#: ``from`` is a Python keyword: the shape is declared functionally
Flow = TypedDict("Flow", {"from": TimelineSlice, "to": TimelineSlice, "link": Json})
Flow.__doc__ = "A launch arrow: host op or API call -> the device task it launched."


class FlowsAnswer(TypedDict):
    """``GET .../timeline/flows``: the selection and its launch arrows."""

    origin_ns: str
    selection: TimelineSlice
    flows: list[Flow]


class SearchAnswer(TypedDict):
    """``GET .../timeline/search``: the first ``limit`` hits in time order; ``total`` counts all."""

    origin_ns: str
    query: str
    total: int
    hits: list[TimelineSlice]


class DetailsAnswer(TypedDict):
    """``GET .../timeline/details``: every column of the slice's canonical row."""

    origin_ns: str
    kind: str
    table: str
    track: str
    row: dict[str, Json]


class NameStats(TypedDict):
    """One name's slices in a range: count, summed whole durations, self time, avg, min, max (ns)."""

    name: str
    count: int
    total_ns: int
    self_ns: int
    avg_ns: float
    min_ns: int
    max_ns: int


class StatsAnswer(TypedDict):
    """``GET .../timeline/stats``: the slices that overlap [start_ns, end_ns) on ``tracks`` tracks,
    by name (longest total first; ``names_total`` counts every name, at most 500 are listed)."""

    origin_ns: str
    start_ns: int
    end_ns: int
    tracks: int
    count: int
    total_ns: int
    names_total: int
    names: list[NameStats]


class RankGaps(TypedDict):
    """One rank's idle gaps in a window (parallel columns)."""

    start_ns: list[int]
    end_ns: list[int]
    host_activity: list[str]


class GapsAnswer(TypedDict):
    """``GET .../timeline/gaps``: the device idle gaps overlapping the window, per rank id; at most
    2 x width of them (the longest), ``total`` counts all."""

    origin_ns: str
    start_ns: int
    end_ns: int
    total: int
    shown: int
    ranks: dict[str, RankGaps]


class RankAlignment(TypedDict):
    """One rank of an alignment: its anchor time (None: the rank lacks it), the offset that puts
    the anchor on the reference rank's, and the anchor as drawn (the collective to highlight)."""

    rank: int
    anchor_ns: int | None
    offset_ns: int
    slice: TimelineSlice | None


class AlignAnswer(TypedDict):
    """``GET .../timeline/align``: per-rank offsets lining up a step start or one collective
    (timeline/align.py); ``steps`` lists the steps every rank recorded."""

    origin_ns: str
    by: str
    edge: str
    step: int | None
    reference: int
    name: str | None
    steps: list[int]
    missing: list[int]
    ranks: list[RankAlignment]


class CompareRun(TypedDict):
    """One run of a comparison: its name (the served id), path, format, and the ranks and steps
    it contributed."""

    name: str
    path: str
    format: str
    ranks: list[int]
    steps: list[int]


class CompareAnswer(TypedDict):
    """``GET api/compare``: ``Comparison.to_dict()``, the JSON of ``profinsight compare --format
    json``.  Each table is a list of records with the columns of its method (docs/views/compare.md):
    ``steps()``, ``waterfall()`` per pair label, ``op_changes(by)`` per ``type`` / ``name``,
    ``ops("type")``, ``modules()`` (``modules_folded``: layers folded), ``summary()``, and
    ``noise_verdicts()``."""

    runs: list[CompareRun]
    steps: list[dict[str, Json]]
    waterfalls: dict[str, list[dict[str, Json]]]
    op_changes: dict[str, list[dict[str, Json]]]
    ops_by_type: list[dict[str, Json]]
    modules: list[dict[str, Json]]
    modules_folded: list[dict[str, Json]]
    summary: list[dict[str, Json]]
    verdicts: list[dict[str, Json]]


#: what the generated TypeScript file declares, in this order
WIRE_TYPES: tuple[Any, ...] = (
    ChartSpec,
    AnalysisPayload,
    ParamRule,
    ParamInfo,
    AnalysisInfo,
    AnalysesAnswer,
    Diagnostic,
    ErrorAnswer,
    ProfileInfo,
    ProfilesAnswer,
    LoadStatus,
    BackgroundImport,
    OpenRankAnswer,
    VendorSummary,
    SummaryAnswer,
    ReadyAnswer,
    MessagesAnswer,
    TablePage,
    TrackInfo,
    UnitInfo,
    RankTracks,
    TrackTree,
    SliceColumns,
    SlicesAnswer,
    CounterBefore,
    CounterColumns,
    CountersAnswer,
    TimelineSlice,
    Flow,
    FlowsAnswer,
    SearchAnswer,
    DetailsAnswer,
    NameStats,
    StatsAnswer,
    RankGaps,
    GapsAnswer,
    RankAlignment,
    AlignAnswer,
    CompareRun,
    CompareAnswer,
)

#: named aliases: an annotation equal to one of these is written as its name
ALIASES: dict[str, Any] = {
    "Json": Json,
    "ChartKind": ChartKind,
    "Severity": Severity,
    "LoadState": LoadState,
}
_ALIAS_TS = {
    "Json": "string | number | boolean | null | Json[] | { [key: string]: Json }",
}

#: where the generated file lives, from the repository root
TS_PATH = Path("ts") / "app" / "generated" / "wire.ts"


# --- TypeScript ----------------------------------------------------------------------------
def _ts(tp: Any) -> str:
    for name, alias in ALIASES.items():
        if tp == alias:
            return name
    if tp is str:
        return "string"
    if tp in (int, float):
        return "number"
    if tp is bool:
        return "boolean"
    if tp is type(None):
        return "null"
    if tp is Any:
        return "unknown"
    if typing.is_typeddict(tp):
        return tp.__name__
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return " | ".join(f"'{a}'" for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(_ts(a) for a in args)
    if origin in (list, tuple):
        inner = _ts(args[0])
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if origin is dict:
        return f"Record<{_ts(args[0])}, {_ts(args[1])}>"
    raise TypeError(f"no TypeScript form for {tp!r}: declare it with str, int, float, bool, list, dict, Literal")


def _doc(text: str | None, indent: str = "") -> list[str]:
    if not text:
        return []
    words = " ".join(text.split()).replace("``", "`")
    return [f"{indent}/** {words} */"]


def _field_docs(td: Any) -> dict[str, str]:
    """``#:`` comments above fields, read from the source of ``td`` and its bases."""
    import inspect

    out: dict[str, str] = {}
    for cls in reversed(td.__mro__):
        if cls is dict or cls is object:
            continue
        try:
            lines = inspect.getsource(cls).splitlines()
        except (OSError, TypeError):
            continue
        pending: list[str] = []
        for line in lines:
            s = line.strip()
            if s.startswith("#:"):
                pending.append(s[2:].strip())
            elif ":" in s and not s.startswith(("class ", '"', "#")) and pending:
                out[s.split(":")[0].strip()] = " ".join(pending)
                pending = []
            else:
                pending = []
    return out


def _interface(td: Any) -> list[str]:
    hints = typing.get_type_hints(td)
    optional = td.__optional_keys__
    docs = _field_docs(td)
    lines = _doc(td.__doc__) + [f"export interface {td.__name__} {{"]
    for key, tp in hints.items():
        lines += _doc(docs.get(key), "  ")
        lines.append(f"  {key}{'?' if key in optional else ''}: {_ts(tp)};")
    return lines + ["}"]


def typescript() -> str:
    """The generated ``ts/app/generated/wire.ts``."""
    out = [
        "/**",
        " * The JSON shapes the Python side sends (analysis payloads, chart specs, HTTP answers).",
        " *",
        " * Generated from src/profinsight/schema/wire.py by `python -m profinsight.schema.wire`;",
        " * do not edit by hand (tests/test_wire_types.py fails when this file drifts).",
        " */",
        "",
    ]
    for name, alias in ALIASES.items():
        out.append(f"export type {name} = {_ALIAS_TS.get(name) or _ts_plain(alias)};")
    for td in WIRE_TYPES:
        out += ["", *_interface(td)]
    return "\n".join(out) + "\n"


def _ts_plain(tp: Any) -> str:
    """An alias's own definition (not its name)."""
    saved = dict(ALIASES)
    ALIASES.clear()
    try:
        return _ts(tp)
    finally:
        ALIASES.update(saved)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m profinsight.schema.wire", description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", help=f"write here (default: {TS_PATH} of this checkout); '-' for stdout")
    args = ap.parse_args(argv)
    text = typescript()
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    path = Path(args.output) if args.output else Path(__file__).resolve().parents[3] / TS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
