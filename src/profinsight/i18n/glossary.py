"""The one vocabulary (docs/glossary.md): every term a person reads about where the step goes,
with its label and its definition in English and Chinese.  Surfaces take a term's words from
here (``t("term.<id>")``, ``t("term.<id>.def")``) so that the CLI, the notebook, the report, the
viewer and the docs say the same thing; ``tests/surfaces/test_glossary.py`` holds them to it.

Each definition names its unit and, for a share, its denominator."""

from __future__ import annotations

#: term id -> (English label, Chinese label, English definition, Chinese definition)
TERMS: dict[str, tuple[str, str, str, str]] = {
    "step": (
        "step",
        "迭代",
        "The device-side step (step_us): from the first to the last compute or communication task of "
        "the step, minus pipeline receive time (the vendor's Stage). Every share 'of the step' divides by it.",
        "设备侧迭代（step_us）：从该步第一个到最后一个计算或通信任务的时间，减去流水线接收时间（厂商的 Stage）。"
        "所有“占迭代”的比例都以它为分母。",
    ),
    "host_step": (
        "host step",
        "主机侧迭代",
        "The host-side ProfilerStep#N span (host_step_us); used where a profile records no device step, and then named so.",
        "主机侧 ProfilerStep#N 的时长（host_step_us）；仅在 profile 没有设备侧迭代时使用，并明确标注。",
    ),
    "compute": (
        "compute",
        "计算",
        "Time in which at least one compute kernel runs on the device: the union of compute-kernel "
        "intervals (computing_us, the vendor's Computing), as a share of the step.",
        "设备上至少有一个计算算子在运行的时间：计算算子区间的并集（computing_us，厂商的 Computing），以迭代为分母。",
    ),
    "communication": (
        "communication",
        "通信",
        "Time in which at least one collective or point-to-point op runs (comm_us). Its time splits "
        "into transit, wait and idle (as a share of the communication time).",
        "至少有一个集合通信或点对点通信算子在运行的时间（comm_us）。其时间分为传输、等待与空闲（以通信时间为分母）。",
    ),
    "transit": (
        "transit",
        "传输",
        "The part of communication time in which data moves over a link (transit_us).",
        "通信时间中数据在链路上传输的部分（transit_us）。",
    ),
    "wait": (
        "wait",
        "等待",
        "The part of communication time spent waiting for a peer, synchronisation included (wait_us, with sync_us inside it).",
        "通信时间中等待对端的部分，包含同步（wait_us，其中包含 sync_us）。",
    ),
    "comm_idle": (
        "communication idle",
        "通信空闲",
        "The part of a collective's time in which it neither moves data nor waits (idle_us): the op "
        "is issued but its peers have not arrived.",
        "集合通信既不传输也不等待的时间（idle_us）：算子已下发但对端尚未就绪。",
    ),
    "overlapped": (
        "overlapped",
        "被掩盖",
        "Communication that runs while compute runs (overlapped_us): it costs no step time.",
        "与计算同时进行的通信（overlapped_us）：不占用迭代时间。",
    ),
    "not_overlapped": (
        "communication not overlapped",
        "未被掩盖的通信",
        "Communication while no compute runs (comm_not_overlapped_us): it adds to the step, as a share of the step.",
        "没有计算在运行时的通信（comm_not_overlapped_us）：会拉长迭代，以迭代为分母。",
    ),
    "device_busy": (
        "device busy",
        "设备忙碌",
        "Compute or communication runs (the union: computing + communication not overlapped), "
        "communication that waits for a peer included; as a share of the step.",
        "有计算或通信在运行（二者并集：计算 + 未被掩盖的通信），包括等待对端的通信；以迭代为分母。",
    ),
    "device_idle": (
        "device idle",
        "设备空闲",
        "Neither compute nor communication runs inside the step (free_us = step − device busy), as a share of the step.",
        "迭代内既无计算也无通信的时间（free_us = 迭代 − 设备忙碌），以迭代为分母。",
    ),
    "idle_gap": (
        "idle gap",
        "空闲间隙",
        "One stretch of device idle of at least min_us (50 us by default) between two device tasks, "
        "with what the host did meanwhile and the API call in progress; the gaps of a step add up to "
        "at most its device idle time (short gaps are not listed).",
        "两个设备任务之间至少 min_us（默认 50 us）的一段设备空闲，附主机当时的活动和进行中的 API 调用；"
        "一个迭代的间隙之和不超过其设备空闲时间（短间隙不列出）。",
    ),
    "host_preparing": (
        "host-side preparing",
        "主机侧准备",
        "From the host step start to the first compute or communication task of the step "
        "(preparing_us); outside the step. Host overhead only where the device was idle then — "
        "see CPU run-ahead.",
        "从主机侧迭代开始到该步第一个计算或通信任务的时间（preparing_us），不计入迭代。"
        "只有当时设备空闲才是主机开销——见 CPU 提前量。",
    ),
    "cpu_run_ahead": (
        "CPU run-ahead",
        "CPU 提前量",
        "The host starts a step while the device still runs the previous step's work (cpu_run_ahead_us: "
        "previous step's last device task end − this host step's start). Healthy: the host keeps the "
        "device fed; host-side preparing then is that wait, not overhead.",
        "主机开始一个迭代时设备仍在执行上一迭代的任务（cpu_run_ahead_us：上一迭代最后一个设备任务结束 − 本迭代主机开始）。"
        "这是健康状态：主机持续喂饱设备；此时的主机侧准备是这段等待，而非开销。",
    ),
    "recoverable": (
        "recoverable time",
        "可节省时间",
        "What a finding's change can remove per step (recoverable_us), never more than the step; "
        "findings and actions are listed by it, largest first.",
        "一条建议的改动每步最多能去掉的时间（recoverable_us），不超过迭代；发现与行动都按它从大到小排列。",
    ),
}

#: words the surfaces used before the glossary, for the same things, that must not come back
RETIRED = ("free / idle", "host / launch", "low utilisation")


def messages() -> dict[str, dict[str, str]]:
    """``term.<id>`` (label) and ``term.<id>.def`` (definition) per language, for the catalogue."""
    out: dict[str, dict[str, str]] = {"en": {}, "zh": {}}
    for tid, (en, zh, en_def, zh_def) in TERMS.items():
        out["en"][f"term.{tid}"], out["zh"][f"term.{tid}"] = en, zh
        out["en"][f"term.{tid}.def"], out["zh"][f"term.{tid}.def"] = en_def, zh_def
    return out


def markdown() -> str:
    """docs/glossary.md, generated from :data:`TERMS` (``python -m profinsight.i18n.glossary``)."""
    lines = [
        "# Glossary — one vocabulary",
        "",
        "Every surface (CLI, notebook, report, viewer, these docs) uses these words, and only these,",
        "for where the step goes. Each share names its denominator: a bare percentage is a share of the",
        '**step** unless the sentence says otherwise ("of the host step", "of compute", "of the',
        'communication time", "of the preparing"). Findings and actions are listed in one order:',
        "recoverable time, largest first.",
        "",
        "Generated from `src/profinsight/i18n/glossary.py` (`python -m profinsight.i18n.glossary`);",
        "`tests/surfaces/test_glossary.py` fails when this page drifts from it, when a surface's label",
        "for one of these quantities is not the glossary's word, or when a retired synonym comes back",
        f"({', '.join(f'“{w}”' for w in RETIRED)}).",
        "",
        "| term | 中文 | definition |",
        "|---|---|---|",
    ]
    for en, zh, en_def, _ in TERMS.values():
        lines.append(f"| **{en}** | {zh} | {en_def} |")
    lines += [
        "",
        "## How the figures relate",
        "",
        "- step = compute + communication not overlapped + device idle (when the vendor's Bubble is 0),",
        "  and device busy = compute + communication not overlapped.",
        "- The verdict's *device idle* is all free time of the step; the idle-gap finding counts only",
        "  gaps of at least 50 us (and those between steps, capped at the steps' free time), so it is",
        "  at most the verdict's figure.",
        "- A collective that waits for a peer keeps the device *busy* (it occupies the communication",
        "  stream): a high device busy share with most communication in *wait* or *communication idle*",
        "  points at a slower peer, not at the local device.",
        "- *Host-side preparing* lies outside the step; its *CPU run-ahead* part is healthy, the rest is",
        "  time the device waits for the host before the step's first task.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - the generator
    from pathlib import Path

    out = Path(__file__).resolve().parents[3] / "docs" / "glossary.md"
    out.write_text(markdown(), encoding="utf-8")
    print(out)
