"""Tornado request handlers over the engine: each a few lines, all errors as JSON.

:func:`make_handlers` returns the route list, so the same handlers mount in ``profinsight serve``
(:mod:`profinsight.server.app`) and, under Jupyter's ``base_url``, in the jupyter-server
extension (pass ``base_class=JupyterHandler`` there so Jupyter's own authentication and XSRF
apply).  Engine calls run on one worker thread: the event loop stays responsive and the
profiles' DuckDB connections are never used by two threads at once.
"""
from __future__ import annotations

import inspect
from concurrent.futures import ThreadPoolExecutor

import tornado.web
from tornado.escape import url_escape
from tornado.ioloop import IOLoop

from .. import timeline
from ..analyses.registry import all_analyses, get as get_analysis
from ..display import payload
from ..errors import ProfileError, UnknownTable
from ..schema import TABLES
from .store import ProfileStore
from .wire import ARROW_MIME, arrow_stream, by_track, dumps

ENGINE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="profinsight-engine")
MAX_TABLE_ROWS = 10_000
RESERVED_ARGS = ("token", "_xsrf")


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

    async def engine(self, fn, *args):
        return await IOLoop.current().run_in_executor(ENGINE, fn, *args)

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
    def int_arg(self, name: str, default=None) -> int:
        raw = self.get_query_argument(name, None)
        if raw is None:
            if default is None:
                raise ProfileError(f"missing query parameter {name!r}", fix=f"add ?{name}=INTEGER")
            return default
        try:
            return int(raw)
        except ValueError:
            raise ProfileError(f"{name} must be an integer, not {raw!r}") from None

    def list_arg(self, name: str) -> list[str]:
        return [t for v in self.get_query_arguments(name) for t in v.split(",") if t]


class ProfilesHandler(ApiHandler):
    async def get(self):
        ids = await self.engine(self.store.refresh) if getattr(self.store, "root", None) else self.store.ids()
        self.send_json({"profiles": [await self.engine(self.store.describe, pid) for pid in ids]})


class ProfileHandler(ApiHandler):
    async def get(self, pid):
        await self.engine(self.store.entry, pid)
        self.send_json(await self.engine(self.store.describe, pid))


class StatusHandler(ApiHandler):
    """Load progress, answered on the event loop: it must not queue behind the load itself."""

    def get(self, pid):
        self.send_json(self.store.status(pid))


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
    return {"table": name, "total_rows": t.num_rows, "offset": offset, "limit": limit,
            "columns": page.column_names, "dtypes": [str(f.type) for f in page.schema],
            "rows": page.to_pylist()}


class AnalysesHandler(ApiHandler):
    async def get(self, pid):
        await self.engine(self.store.entry, pid)
        self.send_json({"analyses": [describe_analysis(a) for _, a in sorted(all_analyses().items())]})


def describe_analysis(a) -> dict:
    """An analysis as its registration declares it (drives the UI's forms and charts)."""
    chart = None if a.chart is None else {"kind": a.chart.kind, "x": a.chart.x, "y": list(a.chart.y),
                                           "top": a.chart.top, "title": a.chart.title,
                                           "series": list(a.chart.series)}
    return {"name": a.name, "title": a.title, "doc": a.doc, "chart": chart, "columns": a.columns,
            "params": [{"name": p.name, "type": p.type.__name__, "default": p.default,
                        "choices": None if p.choices is None else list(p.choices), "help": p.help}
                       for p in a.params]}


class AnalysisHandler(ApiHandler):
    async def get(self, pid, name):
        a = get_analysis(name)
        params = {k: self.get_query_argument(k) for k in self.request.query_arguments if k not in RESERVED_ARGS}
        profile = await self.engine(self.store.get, pid)
        df = await self.engine(lambda: a.run(profile, **params))
        self.send_json(payload(df, a, params))


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
        return profile, origin, origin + start, origin + end, self.list_arg("tracks"), self.int_arg("width", 1000)

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


class SlicesHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin, s, e, ids, width = await self.window(pid)
        table = await self.engine(timeline.slices, profile, s, e, ids, width)
        meta = {"origin_ns": str(origin), "start_ns": s - origin, "end_ns": e - origin, "width": width,
                "px_ns": (e - s) / width, "rows": table.num_rows}
        if self.wants_arrow():
            return self.send_arrow(table, **meta)
        self.send_json({**meta, "tracks": await self.engine(by_track, table, origin)})


class CountersHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin, s, e, ids, width = await self.window(pid)
        buckets, before = await self.engine(timeline.counters, profile, s, e, ids, width)
        meta = {"origin_ns": str(origin), "start_ns": s - origin, "end_ns": e - origin, "width": width,
                "px_ns": (e - s) / width, "rows": buckets.num_rows}
        if self.wants_arrow():
            return self.send_arrow(buckets, **meta)
        tracks = by_track(buckets, origin, time_cols=("start_ns", "end_ns"))
        for track, ts, value in zip(*(before.column(c).to_pylist() for c in ("track", "ts_ns", "value"))):
            tracks.setdefault(track, {})["before"] = {"ts_ns": ts - origin, "value": value}
        self.send_json({**meta, "tracks": tracks})


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
        out = await self.engine(timeline.search, profile, self.get_query_argument("q", ""),
                                self.int_arg("limit", 100))
        for hit in out["hits"]:
            _relative(hit, origin)
        self.send_json({"origin_ns": str(origin), **out})


class DetailsHandler(TimelineHandler):
    async def get(self, pid):
        profile, origin = await self.profile_and_origin(pid)
        out = await self.engine(timeline.details, profile, self.get_query_argument("kind", ""),
                                self.int_arg("rank", 0), self.int_arg("id"))
        out["row"] = {k: (str(v) if isinstance(v, int) and abs(v) > 2 ** 53 else v) for k, v in out["row"].items()}
        self.send_json({"origin_ns": str(origin), **out})


def _relative(row: dict, origin: int) -> None:
    if row.get("start_ns") is not None:
        row["start_ns"] -= origin


ROUTES = [
    (r"api/profiles", ProfilesHandler),
    (r"api/messages", MessagesHandler),
    (r"api/profiles/([^/]+)", ProfileHandler),
    (r"api/profiles/([^/]+)/status", StatusHandler),
    (r"api/profiles/([^/]+)/tables/([^/]+)", TableHandler),
    (r"api/profiles/([^/]+)/analyses", AnalysesHandler),
    (r"api/profiles/([^/]+)/analyses/([^/]+)", AnalysisHandler),
    (r"api/profiles/([^/]+)/timeline/tracks", TracksHandler),
    (r"api/profiles/([^/]+)/timeline/slices", SlicesHandler),
    (r"api/profiles/([^/]+)/timeline/counters", CountersHandler),
    (r"api/profiles/([^/]+)/timeline/flows", FlowsHandler),
    (r"api/profiles/([^/]+)/timeline/search", SearchHandler),
    (r"api/profiles/([^/]+)/timeline/details", DetailsHandler),
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
