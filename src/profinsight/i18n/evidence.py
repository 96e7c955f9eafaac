"""The rank analyses' evidence in words, English and Chinese: one sentence per slow rank
(``slow_ranks``), parallel group (``parallel_groups``), slow link (``slow_links``) and
latency-bound link (``link_latency``), built from the figures of the row it describes.

The analyses write their ``evidence`` column in English with these functions; the ranks report
(``profinsight ranks --lang zh``, its HTML and JSON) words the same rows again in the language
asked for, so the two never disagree.  The words are the catalogue's (:data:`EVIDENCE`, merged
into :data:`profinsight.i18n.MESSAGES`) and the components are the glossary's terms."""

from __future__ import annotations

EVIDENCE: dict[str, dict[str, str]] = {
    "en": {
        "ranks.component.computing_us": "compute",
        "ranks.component.free_us": "device idle",
        "ranks.component.preparing_us": "host-side preparing",
        "ranks.component.comm_wait_us": "communication wait",
        "ranks.ev.slow_rank": "rank {rank}: {component} {value:,.1f} us per step, {dev:,.1f} us ({mads:,.1f} MADs, {pct:.1f}% of the step) above the median {median:,.1f} us{steps}; {wait}",
        "ranks.ev.steps": " in steps {steps}",
        "ranks.ev.wait_shorter": "its communication wait is {wait:,.1f} us shorter than the median — the other ranks wait for it.",
        "ranks.ev.wait_longer": "its communication wait is {wait:,.1f} us longer than the median.",
        "ranks.ev.group": "group {group} ({names}), ranks {ranks}",
        "ranks.ev.group_undeclared": "group {group} (no declared group has these ranks), ranks {ranks}",
        "ranks.ev.group_slow": ": the others wait {wait:,.1f} us per step for rank {rank} ({pct:.1f}% of the step)",
        "ranks.ev.group_spread": "; compute spread {spread:,.1f} us, rank {rank} the most ({pct:.2f}% of the step above the mean)",
        "ranks.ev.end": ".",
        "ranks.ev.link": "link {src}->{dst} ({transport}): {gbps:,.2f} GB/s{vs_expected}, {ratio:.2f}x the median {median:,.2f} GB/s of the {n} {transport} links; {mb:,.1f} MB in {transit:,.1f} us{steps} ({ops}).",
        "ranks.ev.link_expected": ", {ratio:.2f}x the expected {gbps:,.1f} GB/s of {transport}",
        "ranks.ev.link_steps": ", slow in steps {steps}",
        "ranks.ev.latency": "link {src}->{dst} ({transport}): {n} small transfer(s), {nbytes:,} bytes in {transit:,.2f} us, {each:,.2f} us each ({ratio:.2f}x the median of the {transport} links): latency-bound (under {min_bytes:,} bytes), not a bandwidth",
        "ranks.in_groups": "In the parallel groups:",
    },
    "zh": {
        "ranks.component.computing_us": "计算",
        "ranks.component.free_us": "设备空闲",
        "ranks.component.preparing_us": "主机侧准备",
        "ranks.component.comm_wait_us": "通信等待",
        "ranks.ev.slow_rank": "rank {rank}：每步{component} {value:,.1f} us，比中位数 {median:,.1f} us 多 {dev:,.1f} us（{mads:,.1f} 个 MAD，占迭代的 {pct:.1f}%）{steps}；{wait}",
        "ranks.ev.steps": "，见于第 {steps} 步",
        "ranks.ev.wait_shorter": "其通信等待比中位数短 {wait:,.1f} us —— 其他 rank 在等它。",
        "ranks.ev.wait_longer": "其通信等待比中位数长 {wait:,.1f} us。",
        "ranks.ev.group": "通信组 {group}（{names}），rank {ranks}",
        "ranks.ev.group_undeclared": "通信组 {group}（没有声明的并行组包含这些 rank），rank {ranks}",
        "ranks.ev.group_slow": "：其他 rank 每步等待 rank {rank} {wait:,.1f} us（占迭代的 {pct:.1f}%）",
        "ranks.ev.group_spread": "；计算时间差 {spread:,.1f} us，rank {rank} 最多（比均值多迭代的 {pct:.2f}%）",
        "ranks.ev.end": "。",
        "ranks.ev.link": "链路 {src}->{dst}（{transport}）：{gbps:,.2f} GB/s{vs_expected}，为 {n} 条 {transport} 链路中位数 {median:,.2f} GB/s 的 {ratio:.2f} 倍；{transit:,.1f} us 传输 {mb:,.1f} MB{steps}（{ops}）。",
        "ranks.ev.link_expected": "，为 {transport} 预期 {gbps:,.1f} GB/s 的 {ratio:.2f} 倍",
        "ranks.ev.link_steps": "，慢于第 {steps} 步",
        "ranks.ev.latency": "链路 {src}->{dst}（{transport}）：{n} 次小传输，{transit:,.2f} us 传输 {nbytes:,} 字节，每次 {each:,.2f} us（为 {transport} 链路中位数的 {ratio:.2f} 倍）：受时延限制（小于 {min_bytes:,} 字节），不是带宽问题",
        "ranks.in_groups": "并行通信组中：",
    },
}


def _t(key: str, lang: str, **values) -> str:
    text = EVIDENCE.get(lang, EVIDENCE["en"]).get(key) or EVIDENCE["en"][key]
    return text.format(**values)


def component(name: str, lang: str = "en") -> str:
    """A step component (``computing_us``, ``free_us``, ``preparing_us``, ``comm_wait_us``) in words."""
    return _t(f"ranks.component.{name}", lang)


def slow_rank(r, lang: str = "en") -> str:
    """One row of ``slow_ranks`` in words."""
    steps = str(r["steps"] or "")
    wait = float(r["comm_wait_vs_median_us"])
    return _t(
        "ranks.ev.slow_rank",
        lang,
        rank=int(r["rank"]),
        component=component(str(r["component"]), lang),
        value=float(r["value_us"]),
        dev=float(r["deviation_us"]),
        mads=float(r["mads"]),
        pct=100 * float(r["deviation_share_of_step_ratio"]),
        median=float(r["median_us"]),
        steps=_t("ranks.ev.steps", lang, steps=steps) if steps else "",
        wait=_t("ranks.ev.wait_shorter" if wait < 0 else "ranks.ev.wait_longer", lang, wait=abs(wait)),
    )


def _missing(v) -> bool:
    """None, NaN or pandas' NA (whose truth value raises: it is named, never compared)."""
    if v is None or str(v) == "<NA>":
        return True
    return isinstance(v, float) and v != v


def group(r, lang: str = "en") -> str:
    """One row of ``parallel_groups`` in words."""
    names = str(r["names"] or "") if not _missing(r["names"]) else ""
    key = "ranks.ev.group" if names else "ranks.ev.group_undeclared"
    words = _t(key, lang, group=r["group"], names=names, ranks=r["ranks"])
    if not _missing(r["slow_rank"]):
        words += _t(
            "ranks.ev.group_slow",
            lang,
            wait=float(r["waited_for_us"]),
            rank=int(r["slow_rank"]),
            pct=100 * float(r["waited_for_share_of_step_ratio"]),
        )
    if not _missing(r["max_computing_rank"]):
        words += _t(
            "ranks.ev.group_spread",
            lang,
            spread=float(r["computing_spread_us"]),
            rank=int(r["max_computing_rank"]),
            pct=100 * float(r["imbalance_share_of_step_ratio"]),
        )
    return words + _t("ranks.ev.end", lang)


def link(r, lang: str = "en") -> str:
    """One row of ``slow_links`` in words."""
    exp = float(r["expected_gbps"])
    vs = ""
    if exp == exp:
        vs = _t(
            "ranks.ev.link_expected",
            lang,
            ratio=float(r["bandwidth_vs_expected_ratio"]),
            gbps=exp,
            transport=r["transport"],
        )
    steps = str(r["steps"] or "")
    return _t(
        "ranks.ev.link",
        lang,
        src=int(r["src_rank"]),
        dst=int(r["dst_rank"]),
        transport=r["transport"],
        gbps=float(r["bandwidth_gbps"]),
        vs_expected=vs,
        ratio=float(r["bandwidth_vs_median_ratio"]),
        median=float(r["median_gbps"]),
        n=int(r["n_links"]),
        mb=float(r["bytes"]) / 1e6,
        transit=float(r["transit_us"]),
        steps=_t("ranks.ev.link_steps", lang, steps=steps) if steps else "",
        ops=r["op_types"],
    )


def latency(r, min_bytes: int, lang: str = "en") -> str:
    """One row of ``link_latency`` in words (``min_bytes``: the analysis' threshold)."""
    return _t(
        "ranks.ev.latency",
        lang,
        src=int(r["src_rank"]),
        dst=int(r["dst_rank"]),
        transport=r["transport"],
        n=int(r["n_transfers"]),
        nbytes=int(r["bytes"]),
        transit=float(r["transit_us"]),
        each=float(r["per_transfer_us"]),
        ratio=float(r["per_transfer_vs_median_ratio"]),
        min_bytes=int(min_bytes),
    )
