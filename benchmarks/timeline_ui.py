"""Timeline benchmark (not a test): window queries over HTTP, first useful paint, and main-thread
long tasks while panning, on a large scaled profile.

    python benchmarks/timeline_ui.py [--profile benchmarks/data/1000mb/ascend/rank0_ascend_pt]

1. Window queries: a ``profinsight serve`` process (``--in-process``: a thread of this one);
   the slices route is asked
   for a scripted series of windows (whole profile down to 1e-6 of it, at several positions),
   every slice track at once, at the width the page asks for (2 x a 1170 px plot).  The series
   runs once to warm up, then 3 times measured; p50/p95/max over the measured requests, wall
   time from the request to the last byte of the answer (server query and JSON encoding,
   transfer); the client's JSON parsing is reported apart.  Counters the same way.
2. First useful paint: headless Chromium opens ``#ID/timeline``; time from navigation to
   ``data-state="ready"`` on the timeline root.  Measured on a fresh ``profinsight serve``
   process (a new Python process: profile opened from its Parquet cache on the first request,
   timeline index read from the cache entry), once with the persisted index removed first
   (the one-time build), then with it in place; and in this process with everything in memory.
3. Long tasks: a PerformanceObserver('longtask') is installed before the page loads; a scripted
   pan (A/D keys, W/S zoom, mouse drags, wheel zooms) runs with the page drawing and fetching;
   the longest main-thread task is reported (target: none over 200 ms).

4. Frames: with everything in memory, 60 Ctrl+wheel zooms at the cursor (30 in, 30 out) and 4
   mouse drags of 30 moves each, at the top of the rows and again scrolled to the counters; per
   input event, the time from dispatching it to the end of the animation frame that draws it
   (the view paints in that frame's first callback), p50/p95/max per kind (target: p95 < 50
   ms), and apart the time the view's draw itself took (``frame().ms``).  Answers arriving meanwhile are parsed on the same thread, so
   they count where they delay a frame.
5. Search: a name with about 8,000 slices (the one closest to it), through the search route as
   the page asks (limit 1,000, total counted), median of 5; and in the page, from Enter to the
   hit zoomed to and selected (target < 300 ms), 4 searches, each one's time (``all_ms``) beside
   the median: the first zooms into a window not shown before.
6. Range statistics: the stats route over a window holding about 1 M slices (the whole profile
   when it has fewer), every slice track, median of 5 (target < 200 ms, server side).

``PROFINSIGHT_CACHE`` defaults to ``benchmarks/data/cache/timeline``.  Results go to stdout and
``benchmarks/results/timeline_ui.json``; every figure carries the 1-minute load average when it
was taken.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("PROFINSIGHT_CACHE", str(HERE / "data" / "cache" / "timeline"))

from profinsight.server.app import make_app  # noqa: E402
from profinsight.server.threaded import serve_in_thread  # noqa: E402

PLOT_W = 1400 - 230


def get(url: str, parse_ms: list | None = None):
    """(answer, ms from request to the answer's last byte, bytes).  The client's own JSON
    parsing is not part of the query's time (Python's json takes ~45 ms for a 1.7 MB answer,
    a browser a fraction of that); it is appended to ``parse_ms`` when given."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    data = json.loads(body)
    if parse_ms is not None:
        parse_ms.append((time.perf_counter() - t1) * 1000)
    return data, ms, len(body)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def windows(span: int):
    out = []
    for frac in (1, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5, 1e-6):
        for pos in (0.1, 0.37, 0.5, 0.81):
            w = max(1000, int(span * frac))
            s = int((span - w) * pos)
            out.append((s, s + w))
            if frac == 1:
                break
    return out


def queries(base: str, pid: str, tree: dict) -> dict:
    tracks = [t for r in tree["ranks"] for u in r["units"] for t in u["tracks"]]
    slices = ",".join(t["id"] for t in tracks if t["kind"] == "slice")
    counters = ",".join(t["id"] for t in tracks if t["kind"] == "counter")
    # a screenful of counters (the page asks only for the rows on screen, and one screen above
    # and below): the first 20 counter tracks
    screen = ",".join(counters.split(",")[:20])
    # as the page asks: host and API threads deeper than 8 levels only down to 8 (their cap)
    capped = ",".join(
        t["id"]
        for r in tree["ranks"]
        for u in r["units"]
        if u["kind"] in ("host", "api")
        for t in u["tracks"]
        if t["depth"] > 8
    )
    res = {}
    for route, ids, label in (
        ("slices", slices, "slices"),
        ("slices", f"{slices}&capped={capped}&lanes=8" if capped else slices, "slices_as_the_page_asks"),
        ("counters", counters, "counters"),
        ("counters", screen, "counters_screen"),
    ):
        series = windows(tree["end_ns"] + 1)
        width = PLOT_W * 2
        for s, e in series:  # warm-up
            get(f"{base}/api/profiles/{pid}/timeline/{route}?start={s}&end={e}&width={width}&tracks={ids}")
        ms, rows, size, parse = [], [], [], []
        for _ in range(3):
            for s, e in series:
                d, t, n = get(
                    f"{base}/api/profiles/{pid}/timeline/{route}?start={s}&end={e}&width={width}&tracks={ids}", parse
                )
                ms.append(t)
                rows.append(d["rows"])
                size.append(n)
        with_parse = [a + b for a, b in zip(ms, parse)]
        res[label] = {
            "requests": len(ms),
            "tracks": ids.split("&")[0].count(",") + 1,
            "width": width,
            "p50_ms": round(statistics.median(ms), 1),
            "p95_ms": round(pct(ms, 95), 1),
            "max_ms": round(max(ms), 1),
            "max_rows": max(rows),
            "max_bytes": max(size),
            "p95_ms_with_python_json_parse": round(pct(with_parse, 95), 1),
        }
        res[label]["load"] = _load()
        print(label, res[label], flush=True)
    return res


PAN = """async () => {
  const tl = window.profinsightTimeline;
  const c = document.querySelector('.pi-tl-canvas').getBoundingClientRect();
  const key = k => document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
  const wait = ms => new Promise(r => setTimeout(r, ms));
  const frame = () => new Promise(r => requestAnimationFrame(r));
  for (let i = 0; i < 6; i++) { key('w'); await frame(); }
  for (let i = 0; i < 30; i++) { key(i % 10 < 5 ? 'd' : 'a'); await frame(); await wait(30); }
  const cv = document.querySelector('.pi-tl-canvas');
  for (let k = 0; k < 4; k++) {
    cv.dispatchEvent(new MouseEvent('mousedown', {clientX: c.left + 900, clientY: c.top + 200, button: 0, bubbles: true}));
    for (let i = 1; i <= 20; i++) {
      window.dispatchEvent(new MouseEvent('mousemove', {clientX: c.left + 900 - i * 25 * (k % 2 ? -1 : 1), clientY: c.top + 200, bubbles: true}));
      await frame();
    }
    window.dispatchEvent(new MouseEvent('mouseup', {clientX: c.left + 400, clientY: c.top + 200, bubbles: true}));
    await wait(50);
  }
  for (let i = 0; i < 20; i++) {
    cv.dispatchEvent(new WheelEvent('wheel', {deltaY: i < 10 ? -120 : 120, ctrlKey: true, clientX: c.left + 700, clientY: c.top + 300, bubbles: true, cancelable: true}));
    await frame(); await wait(20);
  }
  for (let i = 0; i < 8; i++) { key('s'); await frame(); await wait(30); }
  while (!tl.idle()) { await wait(50); }
  await wait(300);
  return window.__longtasks;
}"""

FRAMES = """async () => {
  const tl = window.profinsightTimeline;
  const cv = document.querySelector('.pi-tl-canvas');
  const c = cv.getBoundingClientRect();
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const wait = ms => new Promise(r => setTimeout(r, ms));
  const out = {wheel: [], wheel_draw: [], drag: [], drag_draw: [], drag_counters: [], drag_counters_draw: []};
  const settle = async () => { while (!tl.idle()) { await wait(50); } await frame(); };
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now();
    cv.dispatchEvent(new WheelEvent('wheel', {deltaY: i < 30 ? -100 : 100, ctrlKey: true,
      clientX: c.left + 700, clientY: c.top + 300, bubbles: true, cancelable: true}));
    await frame();
    out.wheel.push(performance.now() - t0);
    out.wheel_draw.push(tl.frame().ms);
    await wait(15);
  }
  const drags = async (key) => {
    for (let k = 0; k < 4; k++) {
      cv.dispatchEvent(new MouseEvent('mousedown', {clientX: c.left + 900, clientY: c.top + 200, button: 0, bubbles: true}));
      for (let i = 1; i <= 30; i++) {
        const t0 = performance.now();
        window.dispatchEvent(new MouseEvent('mousemove', {clientX: c.left + 900 - i * 15 * (k % 2 ? -1 : 1),
          clientY: c.top + 200, bubbles: true}));
        await frame();
        out[key].push(performance.now() - t0);
        out[key + '_draw'].push(tl.frame().ms);
      }
      window.dispatchEvent(new MouseEvent('mouseup', {clientX: c.left + 450, clientY: c.top + 200, bubbles: true}));
      await wait(50);
    }
  };
  await settle();
  await drags('drag');
  // again with the rows scrolled to the counters (HBM, LLC, NPU MEM ...: area charts)
  const row = tl.tracks().find(r => r.unit === 'HBM');
  if (row) {
    const vs = document.querySelector('.pi-tl-vscroll');
    vs.scrollTop += row.y - 26;
    await wait(100);
    await settle();
    await drags('drag_counters');
    vs.scrollTop = 0;
  }
  await settle();
  return out;
}"""


def _stats(ms: list[float]) -> dict:
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(pct(ms, 95), 1),
        "max_ms": round(max(ms), 1),
    }


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def search_and_stats(base: str, pid: str, profile: Path, tree: dict) -> dict:
    """The search route for a name with about 8,000 slices, and the stats route over about 1 M
    slices (module docstring, 5 and 6)."""
    import profinsight
    from profinsight import timeline as tl

    p = profinsight.load(profile)
    table = tl.index_of(p).slice_table()
    con = p.connection()
    name, count = con.execute(
        f"select name, count(*) n from {table} group by name order by abs(count(*) - 8000), name limit 1"
    ).fetchall()[0]
    starts = [r[0] for r in con.execute(f"select start_ns from {table} order by start_ns").fetchall()]
    origin = int(tree["origin_ns"])
    res = {"search_name": name, "search_slices": int(count)}
    q = urllib.parse.quote(name)
    get(f"{base}/api/profiles/{pid}/timeline/search?q={q}&limit=1000")  # the view over the rows is made once
    ms = []
    for _ in range(5):
        d, t, _ = get(f"{base}/api/profiles/{pid}/timeline/search?q={q}&limit=1000")
        ms.append(t)
    assert d["total"] == count, (d["total"], count)
    res["search_route"] = {**_stats(ms), "total": d["total"], "hits_sent": len(d["hits"]), "load": _load()}
    print("search", res["search_route"], flush=True)
    n = min(1_000_000, len(starts))
    lo, hi = starts[0] - origin, starts[n - 1] - origin + 1
    get(f"{base}/api/profiles/{pid}/timeline/stats?start={lo}&end={hi}")
    ms = []
    for _ in range(5):
        d, t, _ = get(f"{base}/api/profiles/{pid}/timeline/stats?start={lo}&end={hi}")
        ms.append(t)
    res["stats_route"] = {**_stats(ms), "slices": d["count"], "names": d["names_total"], "load": _load()}
    print("stats", res["stats_route"], flush=True)
    return res


LONGTASKS = """window.__longtasks = [];
new PerformanceObserver(l => { for (const e of l.getEntries()) window.__longtasks.push(e.duration); })
  .observe({type: 'longtask', buffered: true});"""


def _launch(pw):
    return pw.chromium.launch(
        executable_path="/usr/bin/chromium",
        args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    )


def _paint(b, url: str) -> tuple[float, float]:
    """(seconds to the first paint, seconds until the idle-gap marks are in as well)."""
    ctx = b.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    t0 = time.perf_counter()
    pg.goto(url)
    pg.wait_for_selector(".pi-tl[data-state='ready']", timeout=600_000)
    dt = time.perf_counter() - t0
    pg.wait_for_function("() => window.profinsightTimeline.gaps() > 0", timeout=600_000)
    gaps = time.perf_counter() - t0
    ctx.close()
    return round(dt, 2), round(gaps, 2)


@contextmanager
def served(profile: Path):
    """A ``profinsight serve`` of ``profile`` in its own process (as in use: the browser, or
    this script's HTTP client, is another process), yielding its base address."""
    exe = Path(sys.executable).with_name("profinsight")
    proc = subprocess.Popen(
        [str(exe), "serve", str(profile), "--no-token"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=os.environ.copy(),
    )
    try:
        line = ""
        while not line.startswith("Open:"):
            line = proc.stdout.readline().strip()
            if not line and proc.poll() is not None:
                raise RuntimeError("profinsight serve exited")
        yield line.split()[1].rstrip("/")
    finally:
        proc.terminate()
        proc.wait(10)


def fresh_process_runs(profile: Path) -> dict:
    """First paint on new ``profinsight serve`` processes (nothing of the profile in memory)."""
    import shutil

    from playwright.sync_api import sync_playwright

    from profinsight.discovery import discover
    from profinsight.store.loader import cache_first
    from profinsight.timeline import persist

    run = discover(profile)[0]
    entries = [r.cached.folder for r in cache_first(run.sources)[0].values()]
    out = {}
    with sync_playwright() as pw:
        b = _launch(pw)
        for label, drop in (
            ("first_paint_new_process_index_built_s", True),
            ("first_paint_new_process_s", False),
            ("first_paint_new_process_again_s", False),
        ):
            if drop:
                for e in entries:
                    shutil.rmtree(e / persist.folder_name(), ignore_errors=True)
            with served(profile) as base:
                gaps = label.replace("first_paint", "gaps")
                out[label], out[gaps] = _paint(b, f"{base}/#{profile.name}/timeline")
                print(label, out[label], "gap marks in", out[gaps], flush=True)
        b.close()
    return out


def browser_runs(base: str, pid: str, search: str | None = None, search_total: int = 0) -> dict:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as pw:
        b = _launch(pw)
        for label in ("first_paint_this_process_s", "first_paint_warm_s"):
            ctx = b.new_context(viewport={"width": 1400, "height": 900})
            pg = ctx.new_page()
            pg.add_init_script(LONGTASKS)
            t0 = time.perf_counter()
            pg.goto(f"{base}/#{pid}/timeline")
            pg.wait_for_selector(".pi-tl[data-state='ready']", timeout=600_000)
            out[label] = round(time.perf_counter() - t0, 2)
            # the idle-gap analysis runs after the first paint; the next page would queue
            # behind it, so wait for it here
            pg.wait_for_function("() => window.profinsightTimeline.gaps() > 0", timeout=600_000)
            print(label, out[label], "gap marks in", round(time.perf_counter() - t0, 2), flush=True)
            if label == "first_paint_warm_s":
                pg.evaluate("() => { window.__longtasks = []; }")
                t0 = time.perf_counter()
                lt = pg.evaluate(PAN)
                out["pan_s"] = round(time.perf_counter() - t0, 1)
                out["pan_longtasks_ms"] = [round(x) for x in lt]
                out["pan_longest_task_ms"] = round(max(lt), 1) if lt else 0
                print("pan", out["pan_s"], "s, long tasks (ms):", out["pan_longtasks_ms"], flush=True)
                pg.evaluate("() => window.profinsightTimeline.setWindow(0, 1e20)")
                pg.wait_for_function("() => window.profinsightTimeline.idle()")
                fr = pg.evaluate(FRAMES)
                for key, name in (
                    ("wheel", "wheel_zoom"),
                    ("drag", "drag_pan"),
                    ("drag_counters", "drag_pan_counters"),
                ):
                    if fr[key]:
                        out[f"frames_{name}"] = {**_stats(fr[key]), "draw": _stats(fr[key + "_draw"]), "load": _load()}
                        print(f"frames: {name}", out[f"frames_{name}"], flush=True)
                if search:
                    ms = []
                    for i in range(4):
                        # a search that finds nothing first (the page keeps the last answer), then
                        # the name, in alternating case (the search ignores case; the text differs,
                        # so the page asks again)
                        pg.fill(".pi-tl-search", "no such slice name")
                        pg.press(".pi-tl-search", "Enter")
                        pg.wait_for_function("() => window.profinsightTimeline.hits().total === 0")
                        pg.fill(".pi-tl-search", search.lower() if i % 2 else search.upper())
                        t0 = time.perf_counter()
                        pg.press(".pi-tl-search", "Enter")
                        pg.wait_for_function(
                            "n => window.profinsightTimeline.hits().total === n && window.profinsightTimeline.idle()",
                            arg=search_total,
                        )
                        ms.append((time.perf_counter() - t0) * 1e3)
                    # every search's time, in order: the first jump zooms into a window not shown
                    # before (its rows and idle gaps are fetched and drawn), the others much less
                    out["search_in_page"] = {**_stats(ms), "all_ms": [round(x, 1) for x in ms], "load": _load()}
                    print("search in the page", out["search_in_page"], flush=True)
            ctx.close()
        b.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", type=Path, default=HERE / "data" / "1000mb" / "ascend" / "rank0_ascend_pt")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument(
        "--in-process",
        action="store_true",
        help="serve from a thread of this process (its HTTP client then competes with the "
        "server for the GIL: large answers measure slower than they are)",
    )
    args = ap.parse_args(argv)
    res = {"profile": str(args.profile), "load_avg": os.getloadavg()}
    if not args.no_browser:
        res.update(fresh_process_runs(args.profile))
    if args.in_process:
        server = serve_in_thread(make_app([args.profile], token=None))
    else:
        server = served(args.profile)
    with server as base:
        pid = args.profile.name
        _, ms, _ = get(f"{base}/api/profiles/{pid}")
        res["profile_open_s"] = round(ms / 1000, 2)
        print("profile open (cache)", res["profile_open_s"], "s", flush=True)
        tree, ms, _ = get(f"{base}/api/profiles/{pid}/timeline/tracks")
        res["events"] = sum(t["rows"] for r in tree["ranks"] for u in r["units"] for t in u["tracks"])
        print("events", res["events"], flush=True)
        res.update(search_and_stats(base, pid, args.profile, tree))
        if not args.no_browser:
            res.update(browser_runs(base, pid, res["search_name"], res["search_slices"]))
        res.update(queries(base, pid, tree))
        res["queries_load"] = _load()
    out = HERE / "results" / "timeline_ui.json"
    out.parent.mkdir(exist_ok=True)
    res["load_avg_end"] = os.getloadavg()
    out.write_text(json.dumps(res, indent=1))
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
