"""Tornado request handlers over the engine: each a few lines, all errors as JSON.

:func:`make_handlers` returns the route list, so the same handlers mount in ``profinsight serve``
(:mod:`profinsight.server.app`) and, under Jupyter's ``base_url``, in the jupyter-server
extension (pass ``base_class=JupyterHandler`` there so Jupyter's own authentication and XSRF
apply).  Engine calls run on one worker thread: the event loop stays responsive and the
profiles' DuckDB connections are never used by two threads at once.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import tornado.web
from tornado.escape import url_escape
from tornado.ioloop import IOLoop

from .. import timeline
from ..errors import ProfileError, UnknownTable
from ..registry import all_analyses
from ..registry import get as get_analysis
from ..render.notebook import payload
from ..schema import TABLES
from .store import ProfileStore, localized_listing
from .wire import ARROW_MIME, arrow_stream, dumps


class PriorityEngine:
    """One worker thread (the profiles' DuckDB connections are never used by two threads at
    once) that runs the waiting call of the lowest priority first, then in the order they came.

    Why: a timeline jump sends its window requests (slices, counters, idle gaps: what the page
    draws) and the selection's details and flows at once.  Served in arrival order, the window's
    cheap queries often waited for the two slower ones (each request makes several calls, so
    their calls interleave); the page is drawn only when the window's answers are in.
    """

    def __init__(self, name: str):
        self._name = name
        self._queue: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def submit(self, fn, *args, priority: int = 1) -> Future:
        fut: Future = Future()
        self._queue.put((priority, next(self._order), fut, fn, args))
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()
        return fut

    def _work(self) -> None:
        while True:
            _, _, fut, fn, args = self._queue.get()
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting handler
                fut.set_exception(e)


ENGINE = PriorityEngine("profinsight-engine")
#: the first paint (a run's vendor summaries) runs beside the engine: it must not queue behind
#: the import it is there to precede; it opens DuckDB connections of its own
FIRST_PAINT = ThreadPoolExecutor(max_workers=1, thread_name_prefix="profinsight-first-paint")
MAX_TABLE_ROWS = 10_000
#: the most rows one page of an analysis answer holds (also its default page size)
MAX_ANALYSIS_ROWS = 5_000
RESERVED_ARGS = ("token", "_xsrf")
#: query arguments of the analysis route that page the result instead of reaching the analysis
PAGING_ARGS = ("offset", "limit")
#: the largest magnitude of an integer query parameter (times, offsets): 2^62, so sums stay in int64
INT_ARG_BOUND = 1 << 62
#: the most hits one timeline search returns
MAX_SEARCH_HITS = 1000


class ApiHandler(tornado.web.RequestHandler):
    """Base: JSON answers, ``{error, fix}`` on failure (400 bad input, 404 unknown name)."""

    def initialize(self, store: ProfileStore):
        self.store = store

    async def prepare(self):
        parent = super().prepare()
        if inspect.isawaitable(parent):
            await parent
        check = self.settings.get("profinsight_auth")
        if check is not None:
            check(self)

    def set_default_headers(self):
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", "no-store")

    #: the engine serves calls of a lower priority first (PriorityEngine): 0 for what the
    #: timeline draws, 1 for everything else
    engine_priority = 1

    async def engine(self, fn, *args):
        fut = ENGINE.submit(fn, *args, priority=self.engine_priority)
        return await asyncio.wrap_future(fut)

    def send_json(self, data, status: int = 200):
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(dumps(data))

    def send_arrow(self, table, **meta):
        self.set_header("Content-Type", ARROW_MIME)
        self.finish(arrow_stream(table, **meta))

    def write_error(self, status_code: int, **kwargs):
        exc = kwargs.get("exc_info", (None, None, None))[1]
        fix = None
        if isinstance(exc, ProfileError):
            status_code = 404 if isinstance(exc, UnknownTable) else 400
            message, fix = str(exc).split("\nFix:")[0], exc.fix
        elif isinstance(exc, tornado.web.HTTPError):
            message = exc.log_message or self._reason
            fix = getattr(exc, "fix", None)
        else:
            message = "internal error" if status_code >= 500 else self._reason
        self.set_status(status_code)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(dumps({"error": message, "fix": fix}))

    def log_exception(self, typ, value, tb):
        if isinstance(value, ProfileError):
            return  # a user's mistake, answered as JSON
        super().log_exception(typ, value, tb)

    # --- query arguments ------------------------------------------------------------
    def int_arg(self, name: str, default=None, lo: int = -INT_ARG_BOUND, hi: int = INT_ARG_BOUND) -> int:
        """An integer query parameter within ``lo .. hi`` (by default +-2^62, so that no sum of two
        of them leaves int64), else a 400 that says the range."""
        raw = self.get_query_argument(name, None)
        if raw is None:
            if default is None:
                raise ProfileError(f"missing query parameter {name!r}", fix=f"add ?{name}=INTEGER")
            return default
        try:
            value = int(raw) if len(raw) <= 40 else None
        except ValueError:
            value = None
        if value is None:
            raise ProfileError(f"{name} must be an integer, not {raw[:40]!r}") from None
        if not lo <= value <= hi:
            raise ProfileError(f"{name} = {raw[:40]} is out of range", fix=f"give {name} between {lo} and {hi}")
        return value

    def list_arg(self, name: str) -> list[str]:
        return [t for v in self.get_query_arguments(name) for t in v.split(",") if t]

    def shift_arg(self) -> dict[int, int] | None:
        """``shift=RANK:NS,RANK:NS``: per-rank time offsets of an aligned multi-rank timeline
        (timeline/align.py), each within +-2^50 ns (13 days), else a 400."""
        out = {}
        for part in self.list_arg("shift"):
            rank, _, ns = part.partition(":")
            try:
                r, v = int(rank), int(ns)
            except ValueError:
                raise ProfileError(
                    f"shift must be RANK:NS,RANK:NS, not {part[:40]!r}", fix="e.g. shift=1:-125000"
                ) from None
            if not (0 <= r < 2**31 and abs(v) <= 2**50):
                raise ProfileError(f"shift {part[:40]} is out of range", fix="a rank >= 0 and |ns| <= 2^50")
            out[r] = v
        return {r: v for r, v in out.items() if v} or None


class ProfilesHandler(ApiHandler):
    async def get(self):
        ids = await self.engine(self.store.refresh) if getattr(self.store, "root", None) else self.store.ids()
        load = self.get_query_argument("load", "1") != "0"  # load=0: list without loading anything
        self.send_json({"profiles": [await self.engine(self.store.describe, pid, load) for pid in ids]})


class RunsHandler(ApiHandler):
    """The cheap listing (the JupyterLab sidebar): runs as discovery sees them, with a doctor
    status, never importing one.  ``?refresh=1`` scans again; ``?under=REL`` lists only the runs
    under one root-relative folder or file (the file browser's "open" asks this).  It runs on
    its own thread, not the engine's, so the sidebar answers while a profile is being imported.
    ``?lang=zh`` gives the diagnostics' and problems' words in that language."""

    async def get(self):
        refresh = self.get_query_argument("refresh", "0") not in ("0", "", "false")
        under = self.get_query_argument("under", None)
        lang = "zh" if self.get_query_argument("lang", "en") == "zh" else "en"
        listing = await IOLoop.current().run_in_executor(None, lambda: self.store.runs(refresh=refresh, under=under))
        self.send_json(localized_listing(listing, lang))


class ProfileHandler(ApiHandler):
    """One profile's description; ``?lang=zh`` gives the diagnostics' words in that language."""

    async def get(self, pid):
        from ..i18n import resolve_lang

        lang = resolve_lang(self.get_query_argument("lang", "en"))
        await self.engine(self.store.entry, pid)
        self.send_json(await self.engine(self.store.describe, pid, True, lang))


class StatusHandler(ApiHandler):
    """Load progress, answered on the event loop: it must not queue behind the load itself."""

    def get(self, pid):
        self.send_json(self.store.status(pid))


class OpenRankHandler(ApiHandler):
    """``api/profiles/ID/ranks/R``: the id of rank R of run ID served on its own, in full (the
    summary tier holds no trace of a rank; this is how its timeline opens)."""

    async def get(self, pid, rank):
        rid = await self.engine(self.store.open_rank, pid, int(rank))
        self.send_json({"id": rid, "rank": int(rank)})


def warm(store: ProfileStore, first_paint: bool = True) -> None:
    """Warm ``store`` (:meth:`ProfileStore.warm`) on the first-paint worker, in the background."""
    FIRST_PAINT.submit(store.warm, first_paint)


class SummaryHandler(ApiHandler):
    """The run before its import (``server.summary``): discovery's facts and the vendor's own
    step and communication summaries where the run has them, within a second, on a worker of
    its own so that a running import never delays it."""

    async def get(self, pid):
        loop = IOLoop.current()
        await loop.run_in_executor(FIRST_PAINT, self.store.entry, pid)
        self.send_json(await loop.run_in_executor(FIRST_PAINT, self.store.first_paint, pid))


class ReadyHandler(ApiHandler):
    """The ranks imported so far of a run still importing (their step breakdown from their own
    tasks), on the first-paint worker: the first ready rank is painted before the last."""

    async def get(self, pid):
        loop = IOLoop.current()
        await loop.run_in_executor(FIRST_PAINT, self.store.entry, pid)
        self.send_json(await loop.run_in_executor(FIRST_PAINT, self.store.ready, pid))


class MessagesHandler(ApiHandler):
    """The viewer's labels (``ui.*`` keys of the message catalogue) in ``?lang=en|zh``."""

    def get(self):
        from ..i18n import LANGS, ui_messages

        lang = self.get_query_argument("lang", "en")
        if lang not in LANGS:
            raise ProfileError(f"unknown language {lang!r}", fix=f"lang is one of {', '.join(LANGS)}")
        self.send_json({"lang": lang, "languages": list(LANGS), "messages": ui_messages(lang)})


class TableHandler(ApiHandler):
    async def get(self, pid, name):
        if name not in TABLES:
            raise UnknownTable(f"no table named {name!r}", fix=f"tables: {', '.join(TABLES)}")
        limit = min(max(self.int_arg("limit", 100), 0), MAX_TABLE_ROWS)
        offset = max(self.int_arg("offset", 0), 0)
        profile = await self.engine(self.store.get, pid)
        self.send_json(await self.engine(_table_page, profile, name, limit, offset))


def _table_page(profile, name, limit, offset) -> dict:
    t = profile.arrow(name)
    page = t.slice(offset, limit)
    return {
        "table": name,
        "total_rows": t.num_rows,
        "offset": offset,
        "limit": limit,
        "columns": page.column_names,
        "dtypes": [str(f.type) for f in page.schema],
        "rows": page.to_pylist(),
    }


class AnalysesHandler(ApiHandler):
    async def get(self, pid):
        await self.engine(self.store.entry, pid)
        self.send_json({"analyses": [describe_analysis(a) for _, a in sorted(all_analyses().items())]})


def describe_analysis(a) -> dict:
    """An analysis as its registration declares it (drives the UI's forms and charts)."""
    chart = None if a.chart is None else a.chart.spec()
    return {
        "name": a.name,
        "title": a.title,
        "doc": a.doc,
        "chart": chart,
        "columns": a.columns,
        "params": [
            {
                "name": p.name,
                "type": p.type.__name__,
                "default": p.default,
                "choices": None if p.choices is None else list(p.choices),
                "help": p.help,
                "requires": [{"value": v, "param": o, "allowed": list(allowed)} for v, o, allowed in p.requires],
            }
            for p in a.params
        ],
    }


class AnalysisHandler(ApiHandler):
    """``?PARAM=VALUE...``: the analysis's own parameters; ``offset`` and ``limit`` (default 0 and
    :data:`MAX_ANALYSIS_ROWS`, at most that) choose the page of rows.  The answer is the analysis
    payload of that page, with ``total_rows`` counting the whole result."""

    async def get(self, pid, name):
        a = get_analysis(name)
        offset = max(self.int_arg("offset", 0), 0)
        limit = min(max(self.int_arg("limit", MAX_ANALYSIS_ROWS), 0), MAX_ANALYSIS_ROWS)
        skip = RESERVED_ARGS + PAGING_ARGS
        params = {k: self.get_query_argument(k) for k in self.request.query_arguments if k not in skip}
        profile = await self.engine(self.store.get, pid)
        self.send_json(await self.engine(lambda: _analysis_page(a.run(profile, **params), a, params, offset, limit)))


def _analysis_page(df, analysis, params: dict, offset: int, limit: int) -> dict:
    """Rows ``offset`` .. ``offset + limit`` of a result as its payload, counted against the whole."""
    out = payload(df.iloc[offset : offset + limit], analysis, params)
    out.update(total_rows=int(len(df)), offset=offset, limit=limit)
    return out


class CompareHandler(ApiHandler):
    """``?base=ID&others=ID[,ID]``: the served profiles compared, in the JSON form of
    ``profinsight compare --format json`` (:meth:`Comparison.to_dict`); runs are named by id."""

    async def get(self):
        base = self.get_query_argument("base", "")
        others = self.list_arg("others")
        if not base or not others:
            raise ProfileError(
                "compare needs a baseline and at least one other profile",
                fix="GET api/compare?base=ID&others=ID[,ID]; ids come from GET /api/profiles",
            )
        ids = [base, *others]
        profiles = [await self.engine(self.store.get, pid) for pid in ids]
        self.send_json(await self.engine(_compare, profiles, ids))


def _compare(profiles, names) -> dict:
    from ..api import compare

    return compare(*profiles, names=names).to_dict()


# --- timeline -------------------------------------------------------------------------
class TimelineHandler(ApiHandler):
    async def profile_and_origin(self, pid):
        profile = await self.engine(self.store.get, pid)
        idx = await self.engine(timeline.index_of, profile)
        return profile, idx.origin_ns

    async def window(self, pid):
        """(profile, origin, start_ns, end_ns, tracks, width): start/end are relative to origin_ns."""
        profile, origin = await self.profile_and_origin(pid)
        start, end = self.int_arg("start"), self.int_arg("end")
        return (
            profile,
            origin,
            origin + start,
            origin + end,
            self.list_arg("tracks"),
            self.int_arg("width", 1000, 1, 100_000),
        )

    def wants_arrow(self) -> bool:
        fmt = self.get_query_argument("format", "json")
        if fmt not in ("json", "arrow"):
            raise ProfileError(f"format must be json or arrow, not {fmt!r}")
        return fmt == "arrow"


class TracksHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        tree = await self.engine(timeline.tracks, profile)
        for rank in tree["ranks"]:
            for unit in rank["units"]:
                for t in unit["tracks"]:
                    t["start_ns"] -= origin
                    t["end_ns"] -= origin
        tree.update(origin_ns=str(origin), start_ns=0, end_ns=tree["end_ns"] - origin)
        self.send_json(tree)


class WindowHandler(TimelineHandler):
    """A window query (slices or counters): Arrow straight from the engine, or JSON encoded from
    numpy columns (building Python lists per row costs more than the query)."""

    engine_priority = 0  # what the page draws goes ahead of details, flows, analyses

    def arrow_answer(self, profile, s, e, ids, width):
        raise NotImplementedError

    def json_answer(self, profile, s, e, ids, width, meta, origin, shift=None, lanes=None) -> bytes:
        raise NotImplementedError

    async def get(self, pid):
        arrow = self.wants_arrow()
        profile, origin, s, e, ids, width = await self.window(pid)
        timeline.check_window(s, e, width)
        meta = {
            "origin_ns": str(origin),
            "start_ns": s - origin,
            "end_ns": e - origin,
            "width": width,
            "px_ns": (e - s) / width,
        }
        shift = self.shift_arg()
        # ``capped=ID,ID&lanes=N``: those tracks only down to N nesting levels (the page draws a
        # deep host thread's first levels until its "show all" toggle is used)
        capped = self.list_arg("capped")
        lanes = dict.fromkeys(capped, self.int_arg("lanes", 8, 1, 100_000)) if capped else None
        if arrow:
            if shift or lanes:
                raise ProfileError("shift and capped are answered in JSON only", fix="leave format=arrow out")
            table = await self.engine(self.arrow_answer, profile, s, e, ids, width)
            return self.send_arrow(table, **meta, rows=table.num_rows)
        body = await self.engine(self.json_answer, profile, s, e, ids, width, meta, origin, shift, lanes)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(body)


class SlicesHandler(WindowHandler):
    def arrow_answer(self, *args):
        return timeline.slices(*args)

    def json_answer(self, *args):
        return _slices_answer(*args)


class CountersHandler(WindowHandler):
    def arrow_answer(self, *args):
        return timeline.counters(*args)[0]  # the buckets; the carry-in values travel in JSON only

    def json_answer(self, *args):
        return _counters_answer(*args)


class FlowsHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        kind, rank, id_ = self.get_query_argument("kind", ""), self.int_arg("rank", 0), self.int_arg("id")
        out = await self.engine(timeline.flows, profile, kind, rank, id_)
        _relative(out["selection"], origin)
        for f in out["flows"]:
            _relative(f["from"], origin)
            _relative(f["to"], origin)
        self.send_json({"origin_ns": str(origin), **out})


class SearchHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        out = await self.engine(
            timeline.search,
            profile,
            self.get_query_argument("q", ""),
            min(self.int_arg("limit", 100, 0), MAX_SEARCH_HITS),
        )
        for hit in out["hits"]:
            _relative(hit, origin)
        self.send_json({"origin_ns": str(origin), **out})


class DetailsHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        out = await self.engine(
            timeline.details, profile, self.get_query_argument("kind", ""), self.int_arg("rank", 0), self.int_arg("id")
        )
        out["row"] = {k: (str(v) if isinstance(v, int) and abs(v) > 2**53 else v) for k, v in out["row"].items()}
        self.send_json({"origin_ns": str(origin), **out})


class StatsHandler(TimelineHandler):
    """``?start=&end=[&tracks=ID,...]``: per-name statistics of the slices in a range (relative ns)."""

    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        s, e = origin + self.int_arg("start"), origin + self.int_arg("end")
        out = await self.engine(timeline.range_stats, profile, s, e, self.list_arg("tracks"), self.shift_arg())
        out.update(origin_ns=str(origin), start_ns=s - origin, end_ns=e - origin)
        self.send_json(out)


class AlignHandler(TimelineHandler):
    """``?by=step[&step=N][&ref=R]`` or ``?by=collective&kind=K&rank=R&id=ID[&edge=start|end]``:
    per-rank offsets that line up a step start or one collective on every rank
    (timeline/align.py); times relative to origin_ns, offsets in ns."""

    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        by = self.get_query_argument("by", "step")
        step = self.int_arg("step", -1) if self.get_query_argument("step", None) is not None else None
        ref = self.int_arg("ref", 0, 0) if self.get_query_argument("ref", None) is not None else None
        kw = {"step": step, "reference": ref, "edge": self.get_query_argument("edge", "start")}
        if by == "collective":
            kw.update(
                kind=self.get_query_argument("kind", "comm_op"), rank=self.int_arg("rank", 0, 0), id_=self.int_arg("id")
            )
        out = await self.engine(lambda: timeline.alignment(profile, by, **kw))
        for r in out["ranks"]:
            if r["anchor_ns"] is not None:
                r["anchor_ns"] -= origin
            if r["slice"]:
                _relative(r["slice"], origin)
        self.send_json({"origin_ns": str(origin), **out})


class GapsHandler(TimelineHandler):
    """``?start=&end=&width=``: the device idle gaps of a window (relative ns)."""

    engine_priority = 0  # drawn with the window (see WindowHandler)

    async def get(self, pid):
        profile, origin, s, e, _, width = await self.window(pid)
        out = await self.engine(timeline.gaps, profile, s, e, width, self.shift_arg())
        for g in out["ranks"].values():
            g["start_ns"] = [x - origin for x in g["start_ns"]]
            g["end_ns"] = [x - origin for x in g["end_ns"]]
        self.send_json({"origin_ns": str(origin), "start_ns": s - origin, "end_ns": e - origin, **out})


def _slices_answer(profile, s, e, ids, width, meta, origin, shift=None, lanes=None) -> bytes:
    # query and encoding in one engine call: one hop through the engine's queue, not two
    return _slices_json(meta, timeline.slice_columns(profile, s, e, ids, width, True, shift, lanes), origin)


def _counters_answer(profile, s, e, ids, width, meta, origin, shift=None, lanes=None) -> bytes:
    return _counters_json(meta, timeline.counter_columns(profile, s, e, ids, width, shift), origin)


def _slices_json(meta: dict, tracks: dict, origin: int) -> bytes:
    """The columnar slices answer (docs/server.md) from numpy columns.

    Names travel once per answer in ``names`` and per row as an index into it: the same few
    hundred op names repeat over tens of thousands of rows, and encoding text per row was most
    of the time of a large answer.  ``source`` is per track (one table per track), ``id`` is -1
    on merged rows, ``merged`` is 0/1; ``total_ns`` is left out (the page does not use it)."""
    import numpy as np

    names: dict[str, int] = {}
    out, rows = {}, 0
    for tid, c in tracks.items():
        merged = c["merged"]
        rows += len(merged)
        used, inverse = np.unique(c["name"], return_inverse=True)
        mine = np.fromiter((names.setdefault(x, len(names)) for x in c["names"][used].tolist()), np.int32, len(used))
        out[tid] = {
            "source": c["source"],
            "depth": c["depth"],
            "name": mine[inverse.reshape(-1)],
            "start_ns": c["start_ns"] - origin,
            "dur_ns": c["dur_ns"],
            "id": c["id"],
            "count": c["count"],
            "merged": merged.view(np.uint8),
        }
    # Only the names can hold text that needs HTML escaping (track ids are built from numbers
    # and hashes, sources are ours): escape them alone instead of scanning the whole multi-MB
    # answer three times.  Track ids are checked all the same (a handful of strings).
    if any(ch in tid for tid in out for ch in "<>&"):
        return dumps({"names": list(names), **meta, "rows": rows, "tracks": out})
    import orjson

    body = orjson.dumps({**meta, "rows": rows, "tracks": out}, option=orjson.OPT_SERIALIZE_NUMPY)
    return b'{"names":' + dumps(list(names)) + b"," + body[1:]


def _counters_json(meta: dict, tracks: dict, origin: int) -> bytes:
    out, rows = {}, 0
    for tid, c in tracks.items():
        rows += len(c["start_ns"])
        t = {k: c[k] for k in ("min", "max", "last", "count")}
        t["start_ns"], t["end_ns"] = c["start_ns"] - origin, c["end_ns"] - origin
        if c["before"] is not None:
            t["before"] = {"ts_ns": c["before"][0] - origin, "value": c["before"][1]}
        out[tid] = t
    return dumps({**meta, "rows": rows, "tracks": out})


def _relative(row: dict, origin: int) -> None:
    if row.get("start_ns") is not None:
        row["start_ns"] -= origin


ROUTES = [
    (r"api/profiles", ProfilesHandler),
    (r"api/messages", MessagesHandler),
    (r"api/runs", RunsHandler),
    (r"api/compare", CompareHandler),
    (r"api/profiles/([^/]+)", ProfileHandler),
    (r"api/profiles/([^/]+)/status", StatusHandler),
    (r"api/profiles/([^/]+)/ranks/([0-9]+)", OpenRankHandler),
    (r"api/profiles/([^/]+)/summary", SummaryHandler),
    (r"api/profiles/([^/]+)/ready", ReadyHandler),
    (r"api/profiles/([^/]+)/tables/([^/]+)", TableHandler),
    (r"api/profiles/([^/]+)/analyses", AnalysesHandler),
    (r"api/profiles/([^/]+)/analyses/([^/]+)", AnalysisHandler),
    (r"api/profiles/([^/]+)/timeline/tracks", TracksHandler),
    (r"api/profiles/([^/]+)/timeline/slices", SlicesHandler),
    (r"api/profiles/([^/]+)/timeline/counters", CountersHandler),
    (r"api/profiles/([^/]+)/timeline/flows", FlowsHandler),
    (r"api/profiles/([^/]+)/timeline/search", SearchHandler),
    (r"api/profiles/([^/]+)/timeline/details", DetailsHandler),
    (r"api/profiles/([^/]+)/timeline/stats", StatsHandler),
    (r"api/profiles/([^/]+)/timeline/gaps", GapsHandler),
    (r"api/profiles/([^/]+)/timeline/align", AlignHandler),
]


def make_handlers(store: ProfileStore, base_url: str = "/", base_class=None) -> list[tuple]:
    """The API's tornado routes under ``base_url``.  ``base_class`` (e.g. jupyter-server's
    ``JupyterHandler``) is mixed under every handler, so the host's authentication applies."""
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    out = []
    for pattern, handler in ROUTES:
        cls = handler if base_class is None else type(handler.__name__, (handler, base_class), {})
        out.append((base + pattern + "/?", cls, {"store": store}))
    return out


def api_url(base_url: str, pid: str, rest: str = "") -> str:
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    return f"{base}api/profiles/{url_escape(pid, plus=False)}{rest}"
