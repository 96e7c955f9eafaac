"""A tree table (``path`` / ``parent`` rows, such as ``module_time``) drawn as nested, collapsible
``<details>`` elements: plain HTML with no script, so it survives a saved notebook.  Each node
shows its inclusive and self time, a bar scaled to the largest root, its kernel count and
share of step; ``(unattributed)`` rows follow the tree with their reasons."""

from __future__ import annotations

import html

import pandas as pd

UNATTRIBUTED = "(unattributed)"
#: nodes drawn at most (a tree of a large LLM stays readable; the DataFrame keeps every row)
_MAX_NODES = 400


def is_tree(df: pd.DataFrame) -> bool:
    return {"path", "parent", "phase", "self_us", "inclusive_us"} <= set(df.columns)


def tree_html(df: pd.DataFrame) -> str:
    parts = []
    for phase, rows in df.groupby("phase", sort=False):
        named = rows[rows["path"] != UNATTRIBUTED]
        kids: dict = {}
        for r in named.itertuples(index=False):  # one entry per module row (a display, not analysis)
            kids.setdefault(None if pd.isna(r.parent) else r.parent, []).append(r)
        top = max((r.inclusive_us for r in kids.get(None, [])), default=0.0) or 1.0
        budget = [_MAX_NODES]
        body = "".join(_node(r, kids, top, budget, 0) for r in _by_time(kids.get(None, [])))
        lost = rows[rows["path"] == UNATTRIBUTED]
        tail = "".join(
            f"<div style='color:#666;margin-left:4px'>{UNATTRIBUTED}: {_us(r.self_us)} "
            f"({r.self_kernels:,} tasks) — {html.escape(str(r.reason))}</div>"
            for r in lost.itertuples(index=False)
        )
        parts.append(
            f"<details open><summary style='font-weight:600'>{html.escape(str(phase))}</summary>"
            f"<div style='margin-left:12px'>{body}{tail}</div></details>"
        )
    return f"<div class='profinsight-tree' style='font:12px monospace'>{''.join(parts)}</div>"


def _by_time(rows: list) -> list:
    return sorted(rows, key=lambda r: -r.inclusive_us)


def _node(r, kids: dict, top: float, budget: list, depth: int) -> str:
    if budget[0] <= 0:
        return ""
    budget[0] -= 1
    width = max(1, round(200 * r.inclusive_us / top))
    share = "" if pd.isna(r.share_of_step_ratio) else f" · {r.share_of_step_ratio:.1%} of step"
    label = (
        f"<span style='display:inline-block;width:{width}px;height:8px;background:#4c78a8;margin-right:6px'></span>"
        f"<b>{html.escape(str(r.module))}</b> {_us(r.inclusive_us)} incl, {_us(r.self_us)} self"
        f" · {r.kernels:,} tasks{share}"
    )
    children = _by_time(kids.get(r.path, []))
    if not children:
        return f"<div style='margin-left:14px'>{label}</div>"
    inner = "".join(_node(c, kids, top, budget, depth + 1) for c in children)
    opened = " open" if depth < 2 else ""
    return f"<details{opened}><summary>{label}</summary><div style='margin-left:12px'>{inner}</div></details>"


def _us(v: float) -> str:
    return f"{v / 1e3:,.3f} ms" if v >= 1e3 else f"{v:,.3f} us"
