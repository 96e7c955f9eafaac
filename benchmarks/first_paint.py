"""First-paint benchmark (not a test): opening an UNCACHED large profile in the viewer.

    python benchmarks/first_paint.py --generate 1000            # generate 1 GB, measure, delete it
    python benchmarks/first_paint.py --profile PATH [--kineto]   # an existing profile

A ``profinsight serve`` process (its own process, as in use) serves the profile with an empty
cache.  Headless Chromium opens ``#ID/overview`` and this script records, from the navigation:

- ``first_paint_s``: the run's summary on the page (``.pi-first-paint[data-state=shown]``: the
  vendor's step and communication summaries, or discovery's facts where there are none);
- ``first_bytes_s``: the progress line first shows bytes read (``data-bytes-done`` > 0);
- ``progress``: every status the page polled (stage, bytes read / total), as a person saw it;
- ``import_s``: the views open (the Overview's key numbers are drawn): the import is done.

Cold figures only (the cache is emptied first).  ``cat /proc/loadavg`` is printed beside each
figure: the machine is shared.  Results go to stdout and ``benchmarks/results/first_paint.json``.
The generated profile is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CHROMIUM = os.environ.get("PROFINSIGHT_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ")[0]
    except OSError:
        return "?"


@contextmanager
def served(profile: Path, cache: Path):
    """``profinsight serve PROFILE`` in its own process with ``cache`` as its (empty) cache."""
    exe = Path(sys.executable).with_name("profinsight")
    env = {**os.environ, "PROFINSIGHT_CACHE": str(cache)}
    proc = subprocess.Popen(
        [str(exe), "serve", str(profile), "--no-token"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
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
        proc.wait(30)


def measure(profile: Path, timeout_s: float, until_bytes: bool = False) -> dict:
    import urllib.request

    from playwright.sync_api import sync_playwright

    cache = Path(tempfile.mkdtemp(prefix="pi-first-paint-cache-"))
    try:
        with served(profile, cache) as base, sync_playwright() as pw:
            pid = json.loads(urllib.request.urlopen(f"{base}/api/profiles?load=0").read())["profiles"][0]["id"]
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            out: dict = {"profile": str(profile), "id": pid, "loadavg_start": loadavg()}
            t0 = time.perf_counter()
            page.goto(f"{base}/#{pid}/overview")
            seen: list = []
            deadline = t0 + timeout_s
            while time.perf_counter() < deadline:
                now = time.perf_counter() - t0
                state = page.evaluate(
                    """() => {
                      const fp = document.querySelector('.pi-first-paint');
                      const pr = document.querySelector('.pi-loading');
                      return {
                        first: fp ? fp.dataset.state : null,
                        bytes: pr ? Number(pr.dataset.bytesDone || 0) : null,
                        total: pr ? Number(pr.dataset.bytesTotal || 0) : null,
                        stage: pr ? pr.dataset.stage || '' : null,
                        text: pr ? pr.innerText.replace(/\\s+/g, ' ') : null,
                        ready: !!document.querySelector('.pi-pane-overview .pi-card'),
                      };
                    }"""
                )
                if state["first"] == "shown" and "first_paint_s" not in out:
                    out["first_paint_s"] = round(now, 2)
                    # of which: from the shell asking for the summary to drawing it (the rest is the
                    # page's own start: scripts, labels, the profile list)
                    out["summary_request_s"] = round(
                        page.evaluate("Number(document.querySelector('.pi-first-paint').dataset.ms)") / 1e3, 2
                    )
                    summary = json.loads(urllib.request.urlopen(f"{base}/api/profiles/{pid}/summary").read())
                    out["summary_server_s"] = summary.get("elapsed_s")
                    out["loadavg_first_paint"] = loadavg()
                    page.screenshot(path=str(REPO / "ui-artifacts" / "first_paint_loading.png"))
                if state["bytes"] and "first_bytes_s" not in out:
                    out["first_bytes_s"] = round(now, 2)
                key = [state["stage"], state["bytes"]]  # a new line when the stage or the bytes move
                if state["text"] and (not seen or seen[-1]["key"] != key):
                    seen.append({"t_s": round(now, 2), "key": key, "text": state["text"], "total": state["total"]})
                if until_bytes and "first_bytes_s" in out:
                    break  # --first-paint-only: the import's own speed is benchmarks/run.py's
                if state["ready"]:
                    out["import_s"] = round(now, 2)
                    out["loadavg_end"] = loadavg()
                    break
                time.sleep(0.25)
            out["progress"] = seen
            browser.close()
            return out
    finally:
        shutil.rmtree(cache, ignore_errors=True)


_ON_DEMAND = """
import json, sys, time
t0 = time.perf_counter()
import profinsight.api
from profinsight.registry import all_analyses
all_analyses()
t1 = time.perf_counter()
from profinsight.discovery import discover
from profinsight.server.summary import first_paint
s = first_paint(discover(sys.argv[1])[0])
t2 = time.perf_counter()
print(json.dumps({"engine_import_s": round(t1 - t0, 2), "summary_on_demand_s": round(t2 - t1, 2),
                  "vendor_steps": len(s["vendor"]["steps"]["rows"]) if s["vendor"] else 0}))
"""


def on_demand(profile: Path) -> dict:
    """The summary computed when asked (JupyterLab: the engine is imported in the background at
    start, no run's summary is computed ahead), in a fresh process with an empty cache."""
    cache = Path(tempfile.mkdtemp(prefix="pi-first-paint-cache-"))
    try:
        env = {**os.environ, "PROFINSIGHT_CACHE": str(cache)}
        out = subprocess.run([sys.executable, "-c", _ON_DEMAND, str(profile)], env=env, capture_output=True, text=True)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res["loadavg_on_demand"] = loadavg()
        return res
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path, help="an existing profile (not deleted)")
    ap.add_argument("--generate", type=int, metavar="MB", help="generate a profile of this size first")
    ap.add_argument("--kineto", action="store_true", help="generate a Kineto trace instead of an Ascend rank")
    ap.add_argument("--keep", action="store_true", help="keep the generated profile")
    ap.add_argument("--timeout", type=float, default=900, help="give up waiting for the import after this many s")
    ap.add_argument("--first-paint-only", action="store_true", help="stop once the progress shows bytes read")
    args = ap.parse_args()
    (REPO / "ui-artifacts").mkdir(exist_ok=True)
    made = None
    profile = args.profile
    if profile is None:
        mb = args.generate or 1000
        made = HERE / "data" / f"first_paint_{mb}mb"
        fmt = "kineto" if args.kineto else "ascend"
        if not made.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "generate.py"),
                    "--target-mb",
                    str(mb),
                    "--out",
                    str(made),
                    "--format",
                    fmt,
                ],
                check=True,
            )
        profile = next((made / fmt).iterdir())
    p = Path(profile)
    size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size
    try:
        res = measure(profile, args.timeout, until_bytes=args.first_paint_only)
        res.update(on_demand(profile))
    finally:
        if made is not None and not args.keep:
            shutil.rmtree(made, ignore_errors=True)
    res["size_bytes"] = size
    print(json.dumps({k: v for k, v in res.items() if k != "progress"}, indent=2))
    for p in res["progress"]:
        print(f"  {p['t_s']:7.2f} s  {p['text']}")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "first_paint.json").write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
