"""What each fixed tool does, as plain Python over the engine (no MCP import): the roots, the
facade (load, compare, ranks_report), the timeline window and search code the web server uses,
and the read-only SQL.  Every answer is JSON-able data bounded in size."""

from __future__ import annotations

from dataclasses import dataclass

from .. import diagnostics as dg
from .. import timeline
from ..errors import ProfileError
from .roots import Roots
from .sql import run_select
from .tables import MAX_ITEMS, plain, row_limit, table_json
from .viewer import ViewerTargets, link

#: diagnostics listed in one answer (the counts cover all of them)
MAX_DIAGNOSTICS = 50


@dataclass
class Session:
    """One MCP server's state: the roots it may read and where the viewer lives."""

    roots: Roots
    viewer: ViewerTargets
    lang: str | None = None

    # --- finding and loading --------------------------------------------------------
    def discover(self, path: str | None = None) -> dict:
        return self.roots.discover(path)

    def load(self, path: str) -> dict:
        pid, store, rid = self.roots.open(path)
        d = store.describe(rid)
        if d.get("error"):
            raise ProfileError(d["error"]["error"], fix=d["error"]["fix"])
        diags = d.get("diagnostics") or []
        return {
            "profile_id": pid,
            "path": d["path"],
            "format": d["format"],
            "level": d["level"],
            "ranks": d["ranks"],
            "steps": d["steps"],
            "tables": {k: v for k, v in (d.get("tables") or {}).items() if v},
            "diagnostics": _diagnostics(diags),
        }

    def doctor(self, path: str) -> dict:
        """Everything the doctor found while loading, worst first."""
        pid, p = self.roots.profile(path)
        diags = [d.to_dict() for d in p.diagnostics]
        return {"profile_id": pid, "worst": dg.worst(p.diagnostics) or "none", **_diagnostics(diags)}

    # --- analyses -------------------------------------------------------------------
    def analysis(self, name: str, path: str, params: dict, max_rows: int | None = None) -> dict:
        from ..registry import get

        a = get(name)
        if self.lang and "lang" in {x.name for x in a.params} and params.get("lang") is None:
            params = {**params, "lang": self.lang}  # --lang at start: the words of findings
        pid, p = self.roots.profile(path)
        df = a.run(p, **params)
        if name == "advise":
            return {"profile_id": pid, **self._findings(pid, p, df, max_rows)}
        return {"profile_id": pid, "analysis": name, "params": plain(a.bind(**params)), **table_json(df, max_rows)}

    def _findings(self, pid: str, p, df, max_rows) -> dict:
        rows = df.to_dict("records")
        fired = [r for r in rows if r["severity"] != "not_applicable"]
        # most recoverable time first; findings without a figure after them, in the advisor's order
        fired.sort(key=lambda r: (0, -float(r["recoverable_us"])) if _num(r["recoverable_us"]) else (1, 0.0))
        n = row_limit(max_rows)
        out = []
        for r in fired[:n]:
            f = {k: plain(r[k]) for k in ("rule", "severity", "category", "title", "message", "change")}
            f["recoverable_us"] = plain(r["recoverable_us"])
            f["share_of_step_ratio"] = plain(r["share_of_step_ratio"])
            # what both figures are of: "step", or "capture" where the profile records no step
            f["basis"] = plain(r.get("basis", "step"))
            f["evidence"] = plain(r["evidence"])
            window = (r["evidence"] or {}).get("window") if isinstance(r["evidence"], dict) else None
            if window and self.viewer.any():
                f["viewer"] = link(self.viewer, pid, p, window=window)
            out.append(f)
        answer = {
            "findings": out,
            "total_findings": len(fired),
            "not_applicable": [
                {"rule": r["rule"], "why": r["message"]} for r in rows if r["severity"] == "not_applicable"
            ],
        }
        if len(fired) > n:
            answer["truncated"] = f"truncated, {len(fired) - n} more findings"
        return answer

    # --- across runs ----------------------------------------------------------------
    def compare(self, base: str, others: list[str], max_rows: int | None = None) -> dict:
        from ..api import compare

        if not others:
            raise ProfileError(
                "compare needs a baseline and at least one other run", fix="compare(base, others=[path])"
            )
        loaded = [self.roots.profile(x) for x in [base, *others]]
        names = [pid for pid, _ in loaded]
        if len(set(names)) != len(names):
            raise ProfileError("compare got the same run twice", fix="pass distinct runs")
        data = compare(*[p for _, p in loaded], names=names).to_dict()
        return plain(data, items=row_limit(max_rows))

    def ranks(self, path: str, threshold: float = 3.0, min_share: float = 0.02, max_rows: int | None = None) -> dict:
        from ..api import ranks_report

        pid, p = self.roots.profile(path)
        return {"profile_id": pid, **plain(ranks_report(p, threshold, min_share).to_dict(), items=row_limit(max_rows))}

    # --- timeline -------------------------------------------------------------------
    def timeline_window(
        self,
        path: str,
        rank: int | None = None,
        start_ns: int | None = None,
        end_ns: int | None = None,
        resolution: int = 200,
        max_rows: int | None = None,
    ) -> dict:
        """The slices of one rank in a window, as the viewer draws them at ``resolution`` pixels:
        one row per slice at least a pixel long, shorter ones merged per track and pixel
        (``merged``, ``count``).  Times are ns relative to the timeline's origin (as in the viewer
        and the HTTP API)."""
        pid, p = self.roots.profile(path)
        tree = timeline.tracks(p)
        origin = tree["origin_ns"]
        ranks = [r["rank"] for r in tree["ranks"]]
        if rank is None:
            rank = ranks[0] if ranks else 0
        if rank not in ranks:
            raise ProfileError(f"no rank {rank} in this profile", fix=f"ranks: {', '.join(map(str, ranks))}")
        units = next(r["units"] for r in tree["ranks"] if r["rank"] == rank)
        tracks = {t["id"]: (u["name"], t["name"]) for u in units for t in u["tracks"] if t["kind"] == "slice"}
        s = origin + (0 if start_ns is None else int(start_ns))
        e = (tree["end_ns"] if end_ns is None else origin + int(end_ns)) or s + 1
        timeline.check_window(s, e, int(resolution))
        cols = timeline.slice_columns(p, s, e, list(tracks), int(resolution)) if tracks else {}
        rows = []
        for tid, c in cols.items():
            unit, track = tracks[tid]
            for name, st, dur, depth, count, merged in zip(
                c["name"].tolist(),
                c["start_ns"].tolist(),
                c["dur_ns"].tolist(),
                c["depth"].tolist(),
                c["count"].tolist(),
                c["merged"].tolist(),
            ):
                rows.append([unit, track, name, st - origin, dur, depth, count, bool(merged)])
        rows.sort(key=lambda r: (r[3], r[0], r[1], r[5]))
        n = row_limit(max_rows)
        out = {
            "profile_id": pid,
            "rank": rank,
            "origin_ns": origin,
            "start_ns": s - origin,
            "end_ns": e - origin,
            "px_ns": (e - s) / int(resolution),
            "columns": ["unit", "track", "name", "start_ns", "dur_ns", "depth", "count", "merged"],
            "rows": [[plain(v) for v in r] for r in rows[:n]],
            "total_rows": len(rows),
        }
        if len(rows) > n:
            out["truncated"] = f"truncated, {len(rows) - n} more rows (narrow the window or lower the resolution)"
        return out

    def search_slices(self, path: str, name: str, limit: int = 20) -> dict:
        """Slices whose name contains ``name`` (any case), in time order; times relative to the
        timeline's origin."""
        pid, p = self.roots.profile(path)
        origin = timeline.index_of(p).origin_ns
        out = timeline.search(p, name, row_limit(limit))
        for hit in out["hits"]:
            if hit.get("start_ns") is not None:
                hit["start_ns"] -= origin
        return {"profile_id": pid, "origin_ns": origin, **plain(out, items=row_limit(limit))}

    # --- SQL and the viewer ---------------------------------------------------------
    def sql(self, path: str, query: str, max_rows: int | None = None, timeout_s: float | None = None) -> dict:
        pid, p = self.roots.profile(path)
        return {"profile_id": pid, **run_select(p, query, max_rows=max_rows, timeout_s=timeout_s)}

    def viewer_link(
        self,
        path: str,
        rule: str | None = None,
        rank: int | None = None,
        start_ns: int | None = None,
        end_ns: int | None = None,
        view: str = "timeline",
    ) -> dict:
        """Where the viewer opens this profile: at a finding's evidence window (``rule``), at a
        window given in ns relative to the timeline's origin, or at a view."""
        pid, p = self.roots.profile(path)
        window = None
        if rule:
            df = p.advise(lang=self.lang)
            hit = df[(df["rule"] == rule) & (df["severity"] != "not_applicable")]
            if not len(hit):
                fired = sorted(set(df.loc[df["severity"] != "not_applicable", "rule"]))
                raise ProfileError(
                    f"rule {rule!r} found nothing in this profile", fix=f"findings: {', '.join(fired) or 'none'}"
                )
            window = (hit.iloc[0]["evidence"] or {}).get("window")
        elif start_ns is not None and end_ns is not None:
            origin = timeline.index_of(p).origin_ns
            window = {"rank": rank, "start_ns": origin + int(start_ns), "end_ns": origin + int(end_ns)}
        if not self.viewer.any():
            raise ProfileError(
                "no viewer address was given when this server started",
                fix="start `profinsight serve` (or JupyterLab) and restart `profinsight mcp` with "
                "--viewer-url URL (or --jupyter-url URL)",
            )
        return {"profile_id": pid, **link(self.viewer, pid, p, window=window, view=view)}


def _diagnostics(diags: list[dict]) -> dict:
    order = {"error": 0, "warning": 1, "info": 2}
    ranked = sorted(diags, key=lambda d: order.get(d.get("severity"), 3))
    out = {
        "counts": {s: sum(1 for d in diags if d.get("severity") == s) for s in dg.SEVERITIES},
        "items": [plain(d) for d in ranked[:MAX_DIAGNOSTICS]],
    }
    if len(ranked) > MAX_DIAGNOSTICS:
        out["truncated"] = f"truncated, {len(ranked) - MAX_DIAGNOSTICS} more diagnostics"
    return out


def _num(v) -> bool:
    try:
        return v is not None and float(v) == float(v)
    except (TypeError, ValueError):
        return False


__all__ = ["MAX_ITEMS", "Session"]
