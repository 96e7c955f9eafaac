"""The JupyterLab extension in a real JupyterLab: a ``jupyter lab`` subprocess (one per module)
on a free port with a token, fixtures copied into a temporary Jupyter root, driven by Playwright
in headless Chromium.  Checks the Profiles sidebar lists one entry per run, opening a run shows
the viewer, the file browser's context menu opens a trace, a notebook cell renders an analysis
inline and ``p.show()`` opens the viewer tab; light and dark theme.  Screenshots go to
``ui-artifacts/`` (``PROFINSIGHT_ARTIFACTS`` overrides).

The labextension must be installed (``pip install .``; in a dev checkout
``jupyter labextension develop --overwrite .`` after ``jlpm build``)."""

from __future__ import annotations

import csv
import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from _support import CHROMIUM, FLAGS, artifacts_dir, fmt_duration, open_lab_page, require, require_chromium, running_lab

import profinsight

REPO = Path(__file__).resolve().parents[2]
TOKEN = "profinsight-lab-test"
RUN = "runs/text_level1"  # 2 rank folders of one collection: ONE entry
TRACE = "traces/gpu_alexnet.json.gz"
NOTEBOOK_TRACE = RUN  # the Ascend run: imported inside the kernel (DuckDB behaves differently there)
pytestmark = [pytest.mark.browser, pytest.mark.jupyter]


def _notebook(cells: list[str]) -> dict:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
        "cells": [
            {"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [], "source": src}
            for i, src in enumerate(cells)
        ],
    }


@pytest.fixture(scope="module")
def lab(fixtures, tmp_path_factory):
    """A running JupyterLab over a temporary root: {base, root, log}."""
    for mod in ("jupyterlab", "ipykernel", "playwright"):
        require(mod)
    require_chromium()
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "root"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1", root / RUN)
    (root / "traces").mkdir()
    shutil.copy(fixtures / "kineto" / "gpu_alexnet.json.gz", root / TRACE)
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("not a profile\n")
    (root / "analysis.ipynb").write_text(
        json.dumps(
            _notebook(
                [
                    f"import profinsight\np = profinsight.load({NOTEBOOK_TRACE!r})\np.op_summary(top=5)",
                    "p.advise()",
                    "p.show()",
                ]
            )
        )
    )
    with running_lab(root, tmp, TOKEN) as lab:
        if isinstance(lab, str):
            pytest.fail(lab)
        yield lab


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(browser, lab):
    """One JupyterLab page for the module's tests (they build on each other, in file order)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US")
    yield open_lab_page(context, lab["base"], TOKEN)
    context.close()


@pytest.fixture(autouse=True)
def _shot_on_failure(request):
    """A screenshot of the page when a test fails (``lab_FAILED_<test>.png``)."""
    yield
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed and "page" in request.fixturenames:
        try:
            shot(request.getfixturevalue("page"), f"FAILED_{request.node.name}")
        except Exception:  # noqa: BLE001 - the failure itself is what matters
            pass


def shot(page, name: str) -> None:
    page.screenshot(path=str(artifacts_dir() / f"lab_{name}.png"))


def set_theme(page, name: str) -> None:
    page.evaluate("name => window.jupyterapp.commands.execute('apputils:change-theme', {theme: name})", name)
    light = "true" if "Light" in name else "false"
    page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached")
    page.wait_for_timeout(500)


def open_sidebar(page):
    tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='profinsight-sidebar']")
    if tab.count() == 0:
        pytest.fail(
            "the profinsight sidebar is not in JupyterLab: is the labextension installed? (jupyter labextension list)"
        )
    if "lm-mod-current" not in (tab.get_attribute("class") or ""):
        tab.click()
    page.wait_for_selector("#profinsight-sidebar[data-state='ready']")
    return page.locator("#profinsight-sidebar")


def viewer_tab(page, pid: str):
    """The viewer tab of ``pid`` once its profile has loaded (the view tabs are shown)."""
    v = page.locator(f".jp-ProfinsightViewer[data-profile-id='{pid}']")
    v.locator(".pi-tabs .pi-tab").first.wait_for(timeout=120_000)
    return v


def test_extension_and_settings_are_served(lab):
    """The labextension is in the page config and its settings schema (schema/plugin.json) is served."""

    def get(path):
        req = urllib.request.Request(f"{lab['base']}{path}", headers={"Authorization": f"token {TOKEN}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    settings = get("/lab/api/settings/profinsight:plugin")
    props = settings["schema"]["properties"]
    assert {"defaultView", "cacheDir", "openFromNotebook"} <= set(props)
    assert props["defaultView"]["default"] == "overview"
    assert get("/profinsight/api/config")["cache_enabled"]


def test_sidebar_lists_one_entry_per_run(page):
    sidebar = open_sidebar(page)
    runs = sidebar.locator(".jp-ProfinsightSidebar-run")
    assert runs.count() == 2, sidebar.inner_text()
    ids = [runs.nth(i).get_attribute("data-id") for i in range(2)]
    assert sorted(ids) == [RUN, TRACE], ids
    by_id = {runs.nth(i).get_attribute("data-id"): runs.nth(i) for i in range(2)}
    assert by_id[RUN].get_attribute("data-ranks") == "2"
    assert by_id[TRACE].get_attribute("data-ranks") == "1"
    text = by_id[RUN].inner_text()
    assert "2 rank(s)" in text and "Level1" in text and "MiB" in text and "not opened yet" in text, text
    assert "notes" not in sidebar.inner_text()
    shot(page, "sidebar_light")


def test_open_from_sidebar_shows_the_viewer(page, lab):
    sidebar = open_sidebar(page)
    sidebar.locator(f".jp-ProfinsightSidebar-run[data-id='{RUN}']").click()
    # at once, under the entry: the run's step time from the profiler's own step_trace_time.csv
    sel = f"#profinsight-sidebar .jp-ProfinsightSidebar-run[data-id='{RUN}'] .jp-ProfinsightSidebar-progress"
    page.wait_for_function(f"() => (document.querySelector(\"{sel}\")?.textContent || '').includes('Step time')")
    line = page.locator(sel)
    stages = [
        float(r["Stage"])
        for f in sorted((lab["root"] / RUN).glob("*/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"))
        for r in csv.DictReader(open(f, encoding="utf-8-sig"))
    ]
    assert f"Step time {fmt_duration(sum(stages) / len(stages) * 1e3)}" in line.inner_text(), line.inner_text()
    assert "vendor summary" in line.inner_text()
    v = viewer_tab(page, RUN)
    assert v.locator(".pi-profile-name").inner_text() == RUN
    tabs = [t.get_attribute("data-view") for t in v.locator(".pi-tabs .pi-tab").all()]
    assert "timeline" in tabs and "overview" in tabs, tabs
    assert "2 rank" in v.locator(".pi-profile-info").inner_text()
    label = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel").inner_text()
    assert label == "text_level1"
    page.wait_for_timeout(1500)  # let the first view draw
    shot(page, "viewer_overview_light")
    v.locator(".pi-tab[data-view='timeline']").click()
    pane = v.locator(".pi-pane-timeline")
    pane.wait_for()
    pane.locator("*").first.wait_for()
    if pane.locator("[data-state]").count():  # the timeline view marks its state; the placeholder does not
        pane.locator("[data-state='ready']").first.wait_for(timeout=60_000)
        # the timeline draws on a canvas; its test hook lists the rows it laid out
        rows = page.evaluate("() => window.profinsightTimeline ? window.profinsightTimeline.tracks() : null")
        assert rows, "the timeline exposes no tracks"
        labels = " | ".join(str(r["label"]) for r in rows)
        assert {r["rank"] for r in rows} >= {0, 1}, labels  # both ranks of the run
        assert len(rows) >= 4, labels
    page.wait_for_timeout(1000)
    shot(page, "viewer_timeline_light")
    # the sidebar now knows it was opened: doctor status from the loaded profile
    open_sidebar(page).locator(".jp-ProfinsightSidebar-refresh").click()
    page.wait_for_selector(
        f"#profinsight-sidebar[data-state='ready'] .jp-ProfinsightSidebar-run[data-id='{RUN}']"
        ":not([data-status='unchecked'])"
    )


def test_dark_theme_follows(page):
    set_theme(page, "JupyterLab Dark")
    v = page.locator(f".jp-ProfinsightViewer[data-profile-id='{RUN}']")
    assert v.get_attribute("data-pi-theme") == "dark"
    bg = v.locator(".pi-viewer").evaluate("el => getComputedStyle(el).backgroundColor")
    r, g, b = [int(x) for x in bg[bg.index("(") + 1 : bg.index(")")].split(",")[:3]]
    assert r + g + b < 200, bg  # a dark background
    # the timeline canvas repaints with the dark theme's colours too (it caches them)
    page.wait_for_function(
        """id => { const c = document.querySelector(`.jp-ProfinsightViewer[data-profile-id='${id}'] .pi-tl canvas`);
                   if (!c || !c.width) return false;
                   const [r, g, b] = c.getContext('2d').getImageData(c.width - 3, c.height - 3, 1, 1).data;
                   return r + g + b < 200; }""",
        arg=RUN,
        timeout=10_000,
    )
    open_sidebar(page)
    shot(page, "viewer_timeline_dark")
    set_theme(page, "JupyterLab Light")
    bg = v.locator(".pi-viewer").evaluate("el => getComputedStyle(el).backgroundColor")
    assert sum(int(x) for x in bg[bg.index("(") + 1 : bg.index(")")].split(",")[:3]) > 600, bg


def test_open_from_file_browser_context_menu(page):
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='filebrowser']").click()
    listing = page.locator(".jp-DirListing-content")
    listing.locator(".jp-DirListing-item:has-text('traces')").first.dblclick()
    item = listing.locator(".jp-DirListing-item:has-text('gpu_alexnet.json.gz')")
    item.wait_for()
    item.click(button="right")
    entry = page.locator(".lm-Menu-item:has-text('Open in profinsight')")
    entry.wait_for()
    shot(page, "file_browser_menu")
    entry.click()
    v = viewer_tab(page, TRACE)
    assert v.locator(".pi-profile-name").inner_text() == TRACE
    # a folder that is not a profile has no such entry
    page.keyboard.press("Escape")
    page.locator(".jp-BreadCrumbs-home").click()
    listing.locator(".jp-DirListing-item:has-text('todo')").count()  # noqa: B018 (listing refreshed)
    notes = listing.locator(".jp-DirListing-item:has-text('notes')")
    notes.click(button="right")
    entry.wait_for()
    entry.click()
    page.locator(".jp-Dialog:has-text('No profile at notes')").wait_for()
    shot(page, "not_a_profile_dialog")
    page.locator(".jp-Dialog .jp-mod-accept, .jp-Dialog button").first.click()


def test_notebook_renders_analysis_and_show_opens_viewer(page, lab):
    page.goto(f"{lab['base']}/lab/tree/analysis.ipynb?token={TOKEN}")
    page.wait_for_selector("#jupyterlab-splash", state="detached")
    page.wait_for_selector(".jp-NotebookPanel")
    # the indicator is idle before a kernel exists; wait for the kernel's own status (pitfall 12)
    page.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')", timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    out = page.locator(".jp-NotebookPanel .jp-Cell").nth(0).locator(".jp-OutputArea-output")
    # attached, not visible: p.show() in the next cell may already have brought the viewer tab to the front
    out.first.wait_for(state="attached", timeout=120_000)
    page.wait_for_function(
        "() => document.querySelector('.jp-NotebookPanel .jp-Cell .jp-OutputArea-output') &&"
        " document.querySelector('.jp-NotebookPanel .jp-Cell .jp-OutputArea-output').innerText.includes('aclnnForeachAddListV2')",
        timeout=120_000,
    )
    text = out.first.inner_text()
    # op_summary(top=5) of both ranks: the top kernel by total time, as in the notebook API
    assert "aclnnForeachAddListV2" in text and "import-failed" not in text
    # advise() as the viewer's finding cards, one per finding, in the advisor's order
    adv = profinsight.load(lab["root"] / RUN).advise()
    fired = list(adv[adv["severity"] != "not_applicable"]["rule"])
    cards = page.locator(".jp-NotebookPanel .jp-Cell").nth(1).locator(".pi-finding")
    cards.first.wait_for(state="attached", timeout=120_000)
    assert [cards.nth(i).get_attribute("data-rule") for i in range(cards.count())] == fired
    show = page.locator(".jp-ProfinsightShow")
    # the viewer tab comes to the front, so the notebook (and this output) is hidden by then
    page.wait_for_selector(".jp-ProfinsightShow[data-state='opened']", state="attached", timeout=120_000)
    assert show.get_attribute("data-profile-id") == NOTEBOOK_TRACE
    v = viewer_tab(page, NOTEBOOK_TRACE)
    assert v.is_visible()
    # back to the notebook for the picture of the inline outputs
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab:has-text('analysis.ipynb')").click()
    page.wait_for_timeout(800)
    shot(page, "notebook_light")
    set_theme(page, "JupyterLab Dark")
    shot(page, "notebook_dark")
    set_theme(page, "JupyterLab Light")
    assert not [e for e in page.errors if "profinsight" in e.lower()], page.errors


def test_agent_link_opens_the_viewer_at_the_finding(page, lab):
    """The JupyterLab link ``profinsight mcp``'s viewer_link hands out (``lab?profinsight=<id>/timeline?
    rank&start_ns&end_ns``) opens the viewer tab of that profile zoomed to the finding's window."""
    from profinsight.agents import make_session

    session = make_session([lab["root"]], jupyter_url=f"{lab['base']}/lab?token={TOKEN}")
    finding = session.analysis("advise", RUN, {"lang": "en"}, 50)["findings"][0]
    w = finding["evidence"]["window"]
    url = finding["viewer"]["jupyterlab"]
    # the state is `<id>/timeline?...` with the id's own "/" escaped, then escaped whole as a query value
    assert url.startswith(f"{lab['base']}/lab?token={TOKEN}&profinsight=runs%252Ftext_level1%2Ftimeline%3Fstart%3D")
    page.goto(url)
    page.wait_for_selector("#jupyterlab-splash", state="detached")
    v = viewer_tab(page, RUN)
    v.locator(".pi-pane-timeline [data-state='ready']").first.wait_for(timeout=120_000)
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=60_000)
    origin = int(page.evaluate("() => window.profinsightTimeline.origin()"))
    shown = page.evaluate("() => window.profinsightTimeline.visibleWindow()")
    span = w["end_ns"] - w["start_ns"]
    assert span > 0  # a link is shown exactly as given (no margin: that is for jumps between views)
    assert shown["start_ns"] == pytest.approx(w["start_ns"] - origin, abs=2)
    assert shown["end_ns"] == pytest.approx(w["end_ns"] - origin, abs=2)
    page.wait_for_timeout(800)
    shot(page, "agent_link_timeline")
    assert not [e for e in page.errors if "profinsight" in e.lower()], page.errors
