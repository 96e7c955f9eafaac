"""The Ranks view of a large generated job inside JupyterLab (not a test): the same view as
``ranks_ui.py`` measures in the standalone viewer, reached the way a JupyterLab user reaches it
-- the Profiles sidebar, the run's entry, the viewer tab, its Ranks tab -- served by the Jupyter
server's own extension (no extra port).

    python benchmarks/ranks_lab.py --run benchmarks/data/ranks_ui_1024/ascend
    python benchmarks/ranks_lab.py --ranks 1024        # generates benchmarks/data/ranks_ui_1024

A ``jupyter lab`` process (fresh cache, its own config) over a temporary root holding a hard-linked
copy of the run; headless Chromium with a PerformanceObserver('longtask') on the page:

1. **open**: from the click on the run's sidebar entry until the Ranks view's heat map and bar
   chart are painted, the Ranks tab clicked as soon as the viewer tab shows it (the server reading
   the run in the summary tier and computing the view's analyses on the way);
2. **switch**: Overview, then Ranks again in the same viewer tab (the viewer keeps a visited view's
   pane: this is showing it again, as a user switching tabs sees it; ``--repaints`` times, the
   median and every time);
3. **reopen**: a new JupyterLab page (a reload: the server keeps the run), the sidebar entry, the
   Ranks tab: from the click on the tab until painted (``--repaints`` times);
4. **freeze**: the longest main-thread task of each and the count over 200 ms.

Every figure is printed with the load average (1 min) read before it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from ranks_ui import LONGTASKS  # noqa: E402

TOKEN = "profinsight-ranks-lab"
RUN = "job"
PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def _ranks_painted(page, timeout_ms: int) -> None:
    page.wait_for_selector(".pi-pane-ranks", state="visible", timeout=timeout_ms)
    page.wait_for_selector(".pi-pane-ranks .pi-heat-chart canvas", timeout=timeout_ms)
    page.wait_for_selector(".pi-pane-ranks .pi-chart canvas", timeout=timeout_ms)
    page.evaluate(PAINTED)


def _tasks(page, since: int) -> dict:
    long = page.evaluate("() => window.__long")[since:]
    return {
        "longest_task_ms": round(max(long), 1) if long else 0.0,
        "tasks_over_200ms": sum(1 for d in long if d > 200),
    }


def _open_lab(context, base: str):
    from _support import open_lab_page

    page = open_lab_page(context, base, TOKEN, timeout_ms=300_000)
    tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='profinsight-sidebar']")
    if "lm-mod-current" not in (tab.get_attribute("class") or ""):
        tab.click()
    page.wait_for_selector("#profinsight-sidebar[data-state='ready']")
    return page


def _ranks_tab(page):
    tab = page.locator(".pi-tab[data-view='ranks']").first
    tab.wait_for(timeout=300_000)
    return tab


def measure(run: Path, repaints: int) -> dict:
    from _support import CHROMIUM, FLAGS, running_lab
    from playwright.sync_api import sync_playwright

    res: dict = {"run": str(run), "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="ranks_lab_") as tmpdir:
        tmp = Path(tmpdir)
        root = tmp / "root"
        root.mkdir()
        shutil.copytree(run, root / RUN, copy_function=os.link)  # hard links: 1,024 ranks in a second
        with running_lab(root, tmp, TOKEN) as lab, sync_playwright() as pw:
            if isinstance(lab, str):
                raise SystemExit(lab)
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US")
            context.add_init_script(LONGTASKS)
            page = _open_lab(context, lab["base"])
            entry = page.locator(f"#profinsight-sidebar .jp-ProfinsightSidebar-run[data-id='{RUN}']")
            entry.wait_for(timeout=300_000)
            load = os.getloadavg()[0]
            t = time.perf_counter()
            entry.click()
            _ranks_tab(page).click()
            _ranks_painted(page, 300_000)
            res["open"] = {"s": round(time.perf_counter() - t, 2), "load1": load, **_tasks(page, 0)}
            switches = []
            for _ in range(max(1, repaints)):
                page.locator(".pi-tab[data-view='overview']").first.click()
                page.wait_for_selector(".pi-pane-ranks", state="hidden", timeout=120_000)
                page.wait_for_timeout(300)
                load, since = os.getloadavg()[0], len(page.evaluate("() => window.__long"))
                t = time.perf_counter()
                page.locator(".pi-tab[data-view='ranks']").first.click()
                _ranks_painted(page, 120_000)
                switches.append({"s": round(time.perf_counter() - t, 2), "load1": load, **_tasks(page, since)})
            res["switch"] = {
                **sorted(switches, key=lambda r: r["s"])[len(switches) // 2],
                "all_s": [r["s"] for r in switches],
            }
            errors = list(page.errors)
            page.close()
            reopens = []
            for _ in range(max(1, repaints)):
                page = _open_lab(context, lab["base"])
                page.locator(f"#profinsight-sidebar .jp-ProfinsightSidebar-run[data-id='{RUN}']").click()
                tab = _ranks_tab(page)
                page.wait_for_timeout(300)
                load, since = os.getloadavg()[0], len(page.evaluate("() => window.__long"))
                t = time.perf_counter()
                tab.click()
                _ranks_painted(page, 120_000)
                reopens.append({"s": round(time.perf_counter() - t, 2), "load1": load, **_tasks(page, since)})
                errors += page.errors
                page.close()
            res["reopen"] = {
                **sorted(reopens, key=lambda r: r["s"])[len(reopens) // 2],
                "all_s": [r["s"] for r in reopens],
            }
            res["errors"] = errors
            browser.close()
    res["load_after"] = os.getloadavg()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--run", type=Path, default=None, help="an existing run folder (else one is generated)")
    ap.add_argument("--repaints", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    gen = None
    run = a.run
    if run is None:
        from generate import generate_ascend

        gen = HERE / "data" / f"ranks_ui_{a.ranks}"
        if not (gen / "ascend").is_dir():
            shutil.rmtree(gen, ignore_errors=True)
            generate_ascend(0, gen, ranks=a.ranks, copies=1, check=False, group_size=8, slow_us=10_000, link=True)
        run = gen / "ascend"
    print(json.dumps(measure(run, a.repaints), indent=2))
    if gen is not None and not a.keep:
        shutil.rmtree(gen, ignore_errors=True)


if __name__ == "__main__":
    main()
