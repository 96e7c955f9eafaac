"""Words of the compare verdict that knows its noise, of the evidence-gated advisor rules and of
the glossary (docs/glossary.md), English and Chinese; merged into the one catalogue by
:mod:`profinsight.i18n.messages`."""

from __future__ import annotations

VERDICTS: dict[str, dict[str, str]] = {
    "en": {
        # compare: the noise verdict (comparison.noise)
        "compare.basis.device": "device step",
        "compare.basis.host": "host step (ProfilerStep; no device step recorded)",
        "compare.noise.regression": "{to} vs {base}: regression: the {basis} grew by {adelta:,.1f} us ({pct:+.1f}%), more than the run-to-run noise of ±{noise:,.1f} us (95%, {na} vs {nb} steps).",
        "compare.noise.improvement": "{to} vs {base}: improvement: the {basis} shrank by {adelta:,.1f} us ({pct:+.1f}%), more than the run-to-run noise of ±{noise:,.1f} us (95%, {na} vs {nb} steps).",
        "compare.noise.neutral": "{to} vs {base}: within noise: the {basis} changed by {delta:+,.1f} us ({pct:+.1f}%), inside the run-to-run noise of ±{noise:,.1f} us (95%, {na} vs {nb} steps).",
        "compare.noise.inconclusive.one_step": "{to} vs {base}: inconclusive: the {basis} changed by {delta:+,.1f} us ({pct:+.1f}%), but {na} vs {nb} steps give no run-to-run noise to judge it against; capture at least 2 active steps per run (schedule(wait=1, warmup=1, active=5)).",
        "compare.noise.inconclusive.not_comparable": "{to} vs {base}: inconclusive: the runs are not comparable ({reasons}).",
        "compare.noise.inconclusive.no_steps": "{to} vs {base}: inconclusive: the two runs share no step time to compare (no device step, no host ProfilerStep on both).",
        "compare.noise.caveats": "Caveats: {items}.",
        "compare.warn.device_family": "different device families ({a} vs {b}): kernels differ, compare at framework ops with --mode framework",
        "compare.warn.hardware": "different hardware ({a} vs {b})",
        "compare.warn.world_size": "different world sizes ({a} vs {b})",
        "compare.warn.ranks": "different rank sets ({a} vs {b}): the per-step means cover different ranks",
        "compare.warn.model": "different programs: the {source} of the two runs match only {sim:.0%}",
        "compare.warn.shapes": "the same ops with other input shapes (shape-aware match {sim:.0%}): batch or sequence size changed",
        "compare.verdict.title": "Verdict (step change against run-to-run noise)",
        "compare.source.ops": "framework ops",
        "compare.source.kernels": "kernel types",
    },
    "zh": {
        "compare.basis.device": "设备侧迭代时间",
        "compare.basis.host": "主机侧迭代时间（ProfilerStep；未记录设备侧迭代）",
        "compare.noise.regression": "{to} 对比 {base}：性能回退：{basis}增加 {adelta:,.1f} us（{pct:+.1f}%），超过运行间噪声 ±{noise:,.1f} us（95%，{na} 对 {nb} 步）。",
        "compare.noise.improvement": "{to} 对比 {base}：性能提升：{basis}减少 {adelta:,.1f} us（{pct:+.1f}%），超过运行间噪声 ±{noise:,.1f} us（95%，{na} 对 {nb} 步）。",
        "compare.noise.neutral": "{to} 对比 {base}：在噪声范围内：{basis}变化 {delta:+,.1f} us（{pct:+.1f}%），未超过运行间噪声 ±{noise:,.1f} us（95%，{na} 对 {nb} 步）。",
        "compare.noise.inconclusive.one_step": "{to} 对比 {base}：无法判断：{basis}变化 {delta:+,.1f} us（{pct:+.1f}%），但 {na} 对 {nb} 步无法估计运行间噪声；每次运行至少采集 2 个 active 步（schedule(wait=1, warmup=1, active=5)）。",
        "compare.noise.inconclusive.not_comparable": "{to} 对比 {base}：无法判断：两次运行不可比（{reasons}）。",
        "compare.noise.inconclusive.no_steps": "{to} 对比 {base}：无法判断：两次运行没有可比较的迭代时间（两者都没有设备侧迭代或主机 ProfilerStep）。",
        "compare.noise.caveats": "注意：{items}。",
        "compare.warn.device_family": "设备类型不同（{a} 对 {b}）：kernel 不同，请用 --mode framework 在框架算子层对比",
        "compare.warn.hardware": "硬件不同（{a} 对 {b}）",
        "compare.warn.world_size": "world size 不同（{a} 对 {b}）",
        "compare.warn.ranks": "rank 集合不同（{a} 对 {b}）：每步均值覆盖的 rank 不同",
        "compare.warn.model": "程序不同：两次运行的{source}仅有 {sim:.0%} 相同",
        "compare.warn.shapes": "算子相同但输入 shape 不同（含 shape 的匹配度 {sim:.0%}）：batch 或序列长度变了",
        "compare.verdict.title": "结论（迭代时间变化与运行间噪声对比）",
        "compare.source.ops": "框架算子",
        "compare.source.kernels": "kernel 类型",
    },
}
