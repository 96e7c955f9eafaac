"""What an agent can read besides tool answers: the glossary, one page per analysis, the docs
pages of the views and the advisor, and the "triage this profile" prompt.

The glossary and the analysis pages are generated (the vocabulary below, the canonical tables'
declarations, each analysis's registration), so they hold in an installed wheel too; the
hand-written pages of ``docs/views/`` and ``docs/advisor.md`` are added where they are found
(a source checkout, or the copy the wheel ships under ``profinsight/_docs``).
"""

from __future__ import annotations

from pathlib import Path

from ..registry import all_analyses

VOCABULARY = """# Glossary

Units: canonical tables hold times as integer nanoseconds (`*_ns`) and sizes as integer bytes;
analysis results hold durations as float microseconds (`*_us`) and shares as fractions 0..1
named by their denominator (`share_of_step_ratio`, `share_of_compute_ratio`,
`share_of_busy_ratio`, `share_of_comm_ratio`).

- **step** (`step_us`): the device-side step (the vendor's `Stage` in step_trace_time.csv): from
  the first to the last compute or communication task of the step, minus pipeline bubble. The
  host-side `ProfilerStep#N` span is `host_step_us`.
- **compute**: device time of compute kernels (the vendor's `Computing`).
- **busy**: the union of compute and communication on the device; **free**: step minus busy.
- **communication not overlapped** (`comm_not_overlapped_us`): communication time during which
  no compute kernel ran.
- **preparing** (`preparing_us`): from the host step start to the first compute or
  communication task.
- **recoverable time** (`recoverable_us`): what the change a finding recommends can remove per
  step, never more than the step.
- **evidence window**: the time window (absolute ns, rank, step) on the timeline that shows a
  finding; `viewer_link(path, rule=...)` opens the viewer there.
- **timeline origin** (`origin_ns`): the timeline tools and the viewer count ns from it.
- Communication sizes in the Ascend JSON files are decimal MB (10^6 bytes), memory sizes in the
  memory CSVs binary MB (2^20 bytes); the tables store bytes.

"""

TRIAGE = """Triage the profile at {path} with the profinsight tools, in the order of the user's guide, and
say at each step what the numbers mean before moving on:

1. `load` it (keep the profile_id) and read the diagnostics: what is missing and which views it
   disables.
2. `step_breakdown`: how the step splits into computing, communication not overlapped, free and
   preparing time.
3. `op_summary` (then `op_summary` with by="type"): the operators that take the most device time.
4. `idle_gaps`: where the device waits and what the host was doing then; `timeline_window` on
   the longest gap shows the slices around it.
5. `utilization` and `launch_stats`: busy ratios, kernel categories, launch overhead.
6. Memory and communication: `memory_peaks`, `memory_by_op`; `comm_summary`, `collectives`
   (and `ranks` when the run has several ranks).
7. `advise`: the findings ranked by recoverable time, each with its evidence. For the top ones
   give the change to make and, where the server has a viewer address, the `viewer_link` that
   opens the timeline at the evidence.

Finish with the verdict (compute-, communication-, memory- or host-bound) and the two or three
changes that recover the most time per step, with their recoverable_us.
"""


def glossary() -> str:
    from ..schema.docs import render

    tables = render().split("\n", 1)[1]  # the tables page without its title
    return VOCABULARY + "## Canonical tables\n" + tables


def analysis_page(name: str) -> str:
    """An analysis as its registration declares it: title, help, parameters, columns."""
    a = all_analyses()[name]
    lines = [f"# {a.name}: {a.title}", "", a.doc, ""]
    if a.params:
        lines += ["## Parameters", "", "| name | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        for p in a.params:
            allowed = ", ".join(map(str, p.choices)) if p.choices else ""
            lines.append(f"| `{p.name}` | {p.type.__name__} | {p.default!r} | {allowed} | {p.help} |")
        lines.append("")
    if a.columns:
        lines += ["## Columns", "", "| column | meaning |", "|---|---|"]
        lines += [f"| `{k}` | {v} |" for k, v in a.columns.items()]
    return "\n".join(lines) + "\n"


def docs_folder() -> Path | None:
    here = Path(__file__).resolve()
    for cand in (here.parents[1] / "_docs", here.parents[3] / "docs"):
        if (cand / "views").is_dir():
            return cand
    return None


def doc_pages() -> dict[str, Path]:
    """``{name: file}`` of the hand-written pages: each view's page and the advisor's."""
    top = docs_folder()
    if top is None:
        return {}
    pages = {f"views/{p.stem}": p for p in sorted((top / "views").glob("*.md"))}
    for extra in ("advisor", "tables", "doctor"):
        if (top / f"{extra}.md").is_file():
            pages[extra] = top / f"{extra}.md"
    return pages
