"""Issue 17 ("Trust"): every reproduction of a new user's trust problems, each proven on the
fixture it names (or a crafted variant in tmp_path) with exact figures.  Tests without a path
live in this module; the others are named by their module under tests/.

Reproductions (the issue's list, in its order):

| # | reproduction | test(s) |
|---|---|---|
| 1 | `analyze` / `report` crash (TypeError) on gpu_cupti_counters and rank_non_gpu | render/test_text.py::test_analyze_and_report_speak_of_profiles_without_steps; test_a_capture_without_steps_says_its_actions_are_of_the_capture |
| 2 | rank_non_gpu data loader "7100000000000.0%": 71 us of a 75,473 us host step is 0.094%; recoverable never above the step | advisor/test_rules_extra.py::test_dataloader_share_is_of_the_host_step_when_no_device_step; test_no_recoverable_time_exceeds_the_step |
| 3 | only kernel_details.csv: "host still dispatching" and TASK_QUEUE_ENABLE without host data | advisor/test_evidence.py::test_idle_gaps_without_host_data_say_the_cause_is_unknown |
| 4 | text_level1 rank 0: 19 aclopCompileAndExecute, 14.05 ms; gap 1,318.8 us overlaps one for 1,126 us; each gap names its API call; compile on the critical path a finding | advisor/test_evidence.py::test_each_idle_gap_names_the_api_call_in_progress, ::test_compile_dispatch_fires_on_aclop_compile_and_execute, ::test_compile_dispatch_stays_silent_without_api_calls_or_compiles |
| 5a | idle defined several ways with no label (verdict vs gaps, wait ratios) | test_device_idle_and_idle_gaps_name_what_they_measure (qwen3); advisor/test_evidence.py::test_idle_gaps_per_step_on_a_partial_export; surfaces/test_glossary.py::test_the_verdict_names_each_share_with_the_glossary_words |
| 5b | GPU trace without steps: verdict and gap finding of different denominators | test_a_stepless_gpu_capture_names_one_denominator; test_a_stepless_gpu_capture_names_the_capture_in_its_actions |
| 5c | "device utilisation" counts HCCL wait as busy, unsaid | test_device_busy_says_that_communication_wait_counts |
| 5d | findings by severity, Actions by recoverable time | test_findings_and_actions_share_one_order |
| 5e | GPU host-side preparing labelled host/launch while the GPU runs ahead | advisor/test_evidence.py::test_cpu_run_ahead_splits_host_side_preparing, ::test_cpu_run_ahead_stays_silent |
| 6a | two CPU-only runs: "step nan us -> nan us" in `compare` and `record` | test_cpu_only_runs_show_their_host_step_not_nan; test_cpu_only_runs_record_their_host_step; comparison/test_noise.py::test_cpu_only_runs_compare_on_the_host_step |
| 6b | `compare A A/rank0`: "gained -553.6 us (-3250%)", no word on the rank sets | test_a_run_against_one_of_its_ranks_gives_no_absurd_gain; comparison/test_noise.py::test_rank_sets_that_differ_refuse_a_verdict |
| 6c | an A100 rank vs a V100 rank without a warning | test_an_a100_rank_and_a_v100_rank_are_not_one_job (crafted: the fixtures name no V100) |
| 6d | two jobs loaded as one run, `doctor` "no problems found" | test_two_jobs_loaded_as_one_run_are_named |
| 6e | GPU vs NPU compare of different models without a warning | test_gpu_against_npu_is_not_compared_as_one_program; comparison/test_noise.py::test_different_hardware_and_program_are_named |
| 6f | one step per side, no noise caveat | comparison/test_noise.py::test_one_step_per_side_is_inconclusive |
| 6g | compare and ranks verdicts English only, `--lang` rejected | comparison/test_noise.py::test_cli_compare_json_verdicts_and_lang, ::test_ranks_and_check_speak_the_chosen_language; test_the_compare_verdict_is_said_in_chinese; test_ranks_in_chinese_on_a_real_job; test_check_is_said_in_chinese; test_group_slow_rank_evidence_follows_the_language; test_slow_rank_evidence_and_component_follow_the_language; test_the_ranks_view_data_follow_the_language |
| 7a | `experiments`: TransData "not applicable" row as the top finding of a CPU run | collection/test_registry_hygiene.py::test_top_finding_is_only_a_fired_finding |
| 7b | `collect` registers runs that never recorded a step | collection/test_registry_hygiene.py::test_a_collection_without_steps_is_refused_with_the_schedule_that_fits |
| 8a | `view utilization`: 34 columns in 160 characters | render/test_terminal.py::test_a_per_step_view_is_transposed_when_its_columns_do_not_fit |
| 8b | collectives, comm_summary, op_summary, memory_peaks too wide | test_wide_views_fit_the_terminal_with_units_per_column; render/test_terminal.py::test_long_kernel_names_give_way_to_the_figures |
| 8c | GPU idle_gaps: one kernel name over ~30 lines | test_gpu_idle_gaps_fit_with_long_kernel_names |
| 8d | `advise` prints raw Python dicts | render/test_terminal.py::test_cli_view_columns_and_numbered_findings; test_view_advise_names_the_capture_and_keeps_a_shareless_estimate |
| 8e | `view --help` says `view --list`, which fails | surfaces/test_cli.py::test_view_list_names_every_analysis_and_its_parameters; render/test_terminal.py::test_view_help_lists_the_registry |
| 8f | memory in raw bytes next to MiB | test_the_report_gives_memory_in_mib_only; test_wide_views_fit_the_terminal_with_units_per_column (memory_peaks) |
| 8g | idle gaps as raw epoch ns | render/test_terminal.py::test_idle_gaps_fit_without_epoch_timestamps |
| 8h | the `analyze` header says "report" | render/test_text.py::test_analyze_and_report_speak_of_profiles_without_steps |

Build items:

| # | item | test(s) |
|---|---|---|
| B1 | one vocabulary (docs/glossary.md, labels), every share names its denominator, one order | surfaces/test_glossary.py (every test); test_a_capture_without_steps_says_its_actions_are_of_the_capture; test_a_stepless_gpu_capture_names_the_capture_in_its_actions; test_device_idle_and_idle_gaps_name_what_they_measure; test_findings_and_actions_share_one_order; advisor/test_actions_overlap.py |
| B2 | evidence-gated rules, recoverable capped by the step; compile_dispatch, host API per gap, cpu_run_ahead, timestamp_sanity each firing and silent on real fixtures | advisor/test_evidence.py (every test: compile_dispatch fires on text_level1 / silent on text_level0 and kernel_details only; cpu_run_ahead fires on resnet50_tb_plugin_2021 / silent on resnet50_json_array and text_level1; timestamp_sanity fires on text_level0 kernels + text_level1 trace / silent on text_level1); test_no_recoverable_time_exceeds_the_step |
| B3 | compare verdict against noise, comparability, host-step fallback, `--lang`, JSON `verdicts` objects | comparison/test_noise.py (every test: resnet50 pair, alexnet vs mi250, text_level0 vs text_level1, cpu_only); test_gpu_against_npu_is_not_compared_as_one_program; test_an_a100_rank_and_a_v100_rank_are_not_one_job; test_the_compare_verdict_is_said_in_chinese; advisor/test_evidence.py::test_timestamp_sanity_on_files_of_two_collections |
| B4 | readable everywhere: tables fit, `--columns`, transposed per-step views, ellipsis, units, numbered `advise`, `view --help` from the registry | render/test_terminal.py (every test); test_wide_views_fit_the_terminal_with_units_per_column; test_gpu_idle_gaps_fit_with_long_kernel_names; surfaces/test_cli.py::test_view_list_names_every_analysis_and_its_parameters |
| B5 | registry hygiene: `experiments` only fired findings, `collect` refuses a run without a step | collection/test_registry_hygiene.py (both tests) |
"""

from __future__ import annotations

import pytest

import profinsight
from profinsight.advisor import guided_report
from profinsight.cli import main
from profinsight.i18n import t

K = "kineto"


def test_two_jobs_loaded_as_one_run_are_named(fixtures, capsys):
    """gpu_alexnet (an A100 capture of 2023-09-27) beside rank 1 of a 128-rank job of 2023-04-29
    loaded without complaint ("no problems found" but for a version note); the two ranks of one
    job stay quiet."""
    a, b = fixtures / K / "gpu_alexnet.json.gz", fixtures / K / "gpu_2rank_rank1.json.gz"
    assert main(["doctor", str(a), str(b)]) == 0  # a warning, not an error: the tables still load
    out = capsys.readouterr().out.replace("\n", " ")
    assert "different-jobs: these ranks do not look like one job: rank 0 was collected 151.7 days after rank 1" in out
    (d,) = [d for d in profinsight.load([a, b]).diagnostics if d.code == "different-jobs"]
    assert d.severity == "warning" and "profinsight compare A B" in d.fix
    one_job = profinsight.load([fixtures / K / "gpu_2rank_rank0.json.gz", b])
    assert "different-jobs" not in {d.code for d in one_job.diagnostics}


def test_gpu_against_npu_is_not_compared_as_one_program(fixtures):
    cmp = profinsight.compare(
        fixtures / "ascend_pt/text_level1/rank0_ascend_pt", fixtures / K / "gpu_alexnet.json.gz", names=["npu", "gpu"]
    )
    v = cmp.noise_verdicts()[0]
    assert v["kind"] == "inconclusive"
    assert [(w["code"], w["blocking"]) for w in v["comparability"]] == [("device_family", False), ("model", True)]
    assert v["comparability"][0]["message"].startswith("different device families (npu vs gpu)")


def test_cpu_only_runs_show_their_host_step_not_nan(fixtures, capsys):
    p = str(fixtures / K / "cpu_only.json.gz")
    assert main(["compare", p, p, "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    assert "Host step per run (ProfilerStep; no device step recorded)" in out.replace("\n", " ")
    assert "210,109.2" in out  # the capture's one ProfilerStep, the figure the verdict compares
    assert "Waterfall" not in out  # nothing to split into compute / communication / idle


def test_a_stepless_gpu_capture_names_one_denominator(fixtures):
    """gpu_alexnet records no ProfilerStep: the verdict said "idle" of a "step" and the gap finding
    a share "of the capture" that did not match; both are of the capture now, and the idle gaps
    (at least 50 us each) are part of the device idle time."""
    rep = guided_report(profinsight.load(fixtures / K / "gpu_alexnet.json.gz"), "en")
    v = rep["verdict"]
    assert v["text"].startswith("Over the capture (1 rank(s), no step recorded, 12840.2 ms)")
    assert v["text"].endswith("device idle 99.9% of the capture.")
    gaps = next(f for f in rep["findings"] if f["rule"] == "idle_gaps")
    assert gaps["message"].startswith(
        "The device idles 93.1% of the capture in 33 idle gaps of at least 50 us (11952.4 ms in the capture)"
    )
    assert gaps["share_of_step_ratio"] <= v["numbers"]["share_of_step_free_ratio"]
    stepped = guided_report(profinsight.load(fixtures / K / "gpu_2rank_rank0.json.gz"), "en")
    gaps = next(f for f in stepped["findings"] if f["rule"] == "idle_gaps")
    assert (
        "of the step in 252 idle gaps of at least 50 us (334.1 ms per step)" in gaps["message"]
    )  # said "of the capture"


def test_device_busy_says_that_communication_wait_counts():
    for lang, words in (("en", "communication wait included"), ("zh", "含等待")):
        assert words in t("ui.overview.utilization", lang) + t("ui.aicore.busy_sub", lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_findings_and_actions_share_one_order(fixtures, lang):
    rep = guided_report(profinsight.load(fixtures / "ascend_pt/text_level1"), lang)
    estimated = [f["rule"] for f in rep["findings"] if f["recoverable_us"]]
    assert [a["rule"] for a in rep["actions"]] == estimated
    assert estimated == ["idle_gaps", "communication_overlap", "compile_dispatch", "format_conversion"]


@pytest.mark.parametrize("view", ["collectives", "comm_summary", "op_summary", "memory_peaks"])
def test_wide_views_fit_the_terminal_with_units_per_column(fixtures, view):
    """``view utilization`` squeezed 34 columns into 160 characters (tests/render/test_terminal.py);
    the other wide views named beside it fit 120 characters too, sizes in MiB / GiB, never bytes."""
    import pandas as pd

    from profinsight.render.terminal import layout

    df = pd.DataFrame(getattr(profinsight.load(fixtures / "ascend_pt/text_level1"), view)())
    lay = layout(df, 120)
    width = sum(max(len(h), *(len(r[i]) for r in lay["rows"])) + 2 for i, h in enumerate(lay["headers"]))
    assert lay["rows"] and width <= 120
    shown = lay["headers"] if not lay["transposed"] else [r[0] for r in lay["rows"]]
    assert not [h for h in shown if h.endswith("bytes")], shown


def test_a_run_against_one_of_its_ranks_gives_no_absurd_gain(fixtures):
    """``compare A A/rank0`` printed "the step gained -553.6 us of it (-3250%)" with no word on
    the rank sets; it refuses a verdict now and says where the time went without a negative gain."""
    cmp = profinsight.compare(
        fixtures / "ascend_pt/text_level1", fixtures / "ascend_pt/text_level1/rank0_ascend_pt", lang="en"
    )
    text = cmp.verdicts()[0]
    assert "not comparable (different rank sets ({0, 1} vs {0})" in text
    assert "gained -" not in text and "yet the step grew by 2,334.2 us" in text


def test_gpu_idle_gaps_fit_with_long_kernel_names(fixtures):
    """A GPU ``view idle_gaps`` printed one kernel name over ~30 lines."""
    import pandas as pd

    from profinsight.render.terminal import layout

    g = pd.DataFrame(profinsight.load(fixtures / K / "gpu_2rank_rank0.json.gz").idle_gaps())
    lay = layout(g, 120)
    width = sum(max(len(h), *(len(r[i]) for r in lay["rows"])) + 2 for i, h in enumerate(lay["headers"]))
    assert width <= 120 and max(len(c) for r in lay["rows"] for c in r) <= 40
    assert any(c.endswith("…") for r in lay["rows"] for c in r)  # the long kernel names are cut, not wrapped


def test_the_report_gives_memory_in_mib_only(fixtures):
    rep = guided_report(profinsight.load(fixtures / "ascend_pt/text_level1"), "en")
    mem = rep["sections"]["memory"]
    assert mem and all(set(r) == {"rank", "component", "kind", "allocated_mib", "reserved_mib", "ops"} for r in mem)
    pta = next(r for r in mem if r["component"] == "PTA" and r["rank"] == 0)
    assert pta["reserved_mib"] == 1522532352 / 2**20  # memory_peaks' reserved_bytes of that peak, in MiB


def test_cpu_only_runs_record_their_host_step(fixtures, tmp_path, monkeypatch, capsys):
    """Two CPU-only runs: ``record`` said "step nan us -> nan us (+nan%)"."""
    monkeypatch.setenv("PROFINSIGHT_EXPERIMENTS", str(tmp_path / "experiments"))
    cpu = fixtures / K / "cpu_only.json.gz"
    profinsight.register("cpu-a", cpu)
    profinsight.register("cpu-b", cpu)
    out = tmp_path / "record.md"
    assert main(["record", "cpu-a", "cpu-b", "-o", str(out), "--lang", "en"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "nan" not in text.lower() and "210,109.2 (host)" in text
    assert "the host step (ProfilerStep; no device step recorded) changed by +0.0 us" in text


@pytest.mark.parametrize(
    ("lang", "heading", "line", "total"),
    [
        (
            "en",
            "## Actions ranked by recoverable time over the capture (no step recorded)",
            "1. Frequent device malloc/free or empty_cache: 1,670.35 ms",
            "**Together: 1,670.35 ms in the capture.**",
        ),
        (
            "zh",
            "## 按整个采集可节省时间排序的优化措施（未记录迭代）",
            "1. 频繁的设备 malloc/free 或 empty_cache: 1,670.35 ms",
            "**合计：整个采集 1,670.35 ms。**",
        ),
    ],
)
def test_a_capture_without_steps_says_its_actions_are_of_the_capture(fixtures, capsys, lang, heading, line, total):
    """gpu_cupti_counters records no step at all: the Actions said "ranked by recoverable time per
    step" and "Together: 1,670.35 ms per step", and the memory finding counted its calls "per
    step".  Every figure is of the capture now, in both languages; the unknown verdict is said once."""
    path = str(fixtures / K / "gpu_cupti_counters.json.gz")
    assert main(["analyze", path, "--format", "md", "--lang", lang]) == 0
    out = capsys.readouterr().out
    assert heading in out.splitlines() and line in out.splitlines() and total in out.splitlines()
    assert "per step" not in out and "每步" not in out
    churn = {
        "en": "45 device malloc/free calls (cudaMalloc, cudaFree) and 0 empty_cache calls in the capture, "
        "1670.35 ms of host time in the capture.",
        "zh": "整个采集 45 次设备 malloc/free 调用（cudaMalloc, cudaFree）和 0 次 empty_cache 调用，"
        "整个采集主机耗时 1670.35 ms。",
    }[lang]
    assert churn in out
    assert main(["analyze", path, "--lang", lang]) == 0  # the terminal form: the verdict once, not as title and text
    term = capsys.readouterr().out
    assert term.count(t("verdict.unknown", lang)) == 1 and heading[3:] in term


@pytest.mark.parametrize(
    ("lang", "lines", "total"),
    [
        (
            "en",
            [
                "1. Device idle in long gaps (idle gaps): 11,952.42 ms (93.1% of capture)  ",
                "2. Frequent device malloc/free or empty_cache: 8,510.53 ms (66.3% of capture)  ",
                "3. Host waits for the device (synchronisation): 901.51 ms (7.0% of capture)  ",
            ],
            "**Together: between 11,952.42 and 12,829.61 ms in the capture (93.1%–99.9% of the capture), less than",
        ),
        (
            "zh",
            [
                "1. 设备长时间空闲（空闲间隙）: 11,952.42 ms (占采集时长 93.1%)  ",
                "2. 频繁的设备 malloc/free 或 empty_cache: 8,510.53 ms (占采集时长 66.3%)  ",
                "3. 主机等待设备（同步）: 901.51 ms (占采集时长 7.0%)  ",
            ],
            "**合计：整个采集 11,952.42 到 12,829.61 ms（占采集时长的 93.1%–99.9%），少于",
        ),
    ],
)
def test_a_stepless_gpu_capture_names_the_capture_in_its_actions(fixtures, capsys, tmp_path, lang, lines, total):
    """gpu_alexnet (no ProfilerStep): the Actions said "(93.1% of step)" of a step that does not
    exist; the findings, the Actions, their total, the synchronisation finding's share and the
    HTML report name the capture."""
    path = str(fixtures / K / "gpu_alexnet.json.gz")
    assert main(["analyze", path, "--format", "md", "--lang", lang]) == 0
    out = capsys.readouterr().out
    got = out.splitlines()
    assert all(x in got for x in lines), [x for x in got if " ms (" in x]
    assert any(x.startswith(total) for x in got)
    # the changes may say what to do "per iteration" (每步不要调用 ...); no figure is "per step"
    assert "of step" not in out and "per step" not in out and "占迭代" not in out and "每步 " not in out
    sync = {
        "en": "901.51 ms in the capture (7.0% of the capture) in 18 gaps",
        "zh": "整个采集 901.51 ms（占采集时长的 7.0%）",
    }
    assert sync[lang] in out
    html_out = tmp_path / "r.html"
    assert main(["report", path, "-o", str(html_out), "--lang", lang]) == 0
    page = html_out.read_text(encoding="utf-8")
    assert t("section.actions.capture", lang) in page and lines[0][3:].strip() in page
    assert "of step" not in page


def test_view_advise_names_the_capture_and_keeps_a_shareless_estimate(fixtures, capsys):
    """``view advise`` said "recoverable time not estimated" for a finding estimated without a step
    (gpu_cupti_counters) and "per step (x% of the step)" on a capture without steps."""
    assert main(["view", "advise", str(fixtures / K / "gpu_cupti_counters.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "1. Frequent device malloc/free or empty_cache [high] — recoverable 1,670.35 ms in the capture" in out
    assert main(["view", "advise", str(fixtures / K / "gpu_alexnet.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "[medium] — recoverable 901.51 ms in the capture (7.0% of the capture)" in out


QWEN = "ascend_llm/qwen3_level2_4rank"
#: the group rank 3 holds back on qwen3_level2_4rank, in both languages
GROUP_EN = (
    "group 3985310499963036764 (embd, mp, pp), ranks 1, 3: the others wait 163,646.8 us per step for rank 3 "
    "(20.2% of the step); compute spread 170,228.0 us, rank 3 the most (10.51% of the step above the mean)."
)
GROUP_ZH = (
    "通信组 3985310499963036764（embd, mp, pp），rank 1, 3：其他 rank 每步等待 rank 3 163,646.8 us（占迭代的 20.2%）；"
    "计算时间差 170,228.0 us，rank 3 最多（比均值多迭代的 10.51%）。"
)


def test_group_slow_rank_evidence_follows_the_language(fixtures, capsys):
    """``analyze --lang zh --format json`` on qwen3_level2_4rank gave the group_slow_rank
    finding a Chinese message but English evidence sentences."""
    import json

    path = str(fixtures / QWEN)
    for lang, words in (("en", GROUP_EN), ("zh", GROUP_ZH)):
        assert main(["analyze", path, "--format", "json", "--lang", lang]) == 0
        rep = json.loads(capsys.readouterr().out)
        (f,) = [f for f in rep["findings"] if f["rule"] == "group_slow_rank"]
        assert f["evidence"]["groups"][0]["evidence"] == words
        assert [g["slow_rank"] for g in f["evidence"]["groups"]] == [3, 2]


def test_slow_rank_evidence_and_component_follow_the_language():
    """The slow_rank finding (a hand-made 4-rank job: rank 3 computes 500 us longer, its DP group
    waits for it) said its component as a column name ("computing") and its evidence in English
    in a Chinese report."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "advisor"))
    from test_group_rules import trace

    from profinsight.advisor import evaluate

    p = trace(500)
    (en,) = evaluate(p, "en", {}, only=("slow_rank",))[0]
    (zh,) = evaluate(p, "zh", {}, only=("slow_rank",))[0]
    assert en["message"].startswith("Rank 3 spends 1.50 ms per step in compute, 0.50 ms above the median")
    assert zh["message"].startswith("rank 3 每步计算用时 1.50 ms，比各 rank 中位数（1.00 ms）多 0.50 ms")
    assert en["evidence"]["slow_ranks"][0]["evidence"] == (
        "rank 3: compute 1,500.0 us per step, 500.0 us (125.0 MADs, 25.0% of the step) above the median "
        "1,000.0 us in steps 1; its communication wait is 500.0 us shorter than the median — the other ranks wait for it."
    )
    assert zh["evidence"]["slow_ranks"][0]["evidence"] == (
        "rank 3：每步计算 1,500.0 us，比中位数 1,000.0 us 多 500.0 us（125.0 个 MAD，占迭代的 25.0%），见于第 1 步；"
        "其通信等待比中位数短 500.0 us —— 其他 rank 在等它。"
    )
    assert zh["evidence"]["groups"][0]["evidence"] == (
        "通信组 g7（dp），rank 0, 1, 2, 3：其他 rank 每步等待 rank 3 500.0 us（占迭代的 25.0%）；"
        "计算时间差 500.0 us，rank 3 最多（比均值多迭代的 18.75%）。"
    )
    # the kept findings are not changed by wording them in Chinese
    assert evaluate(p, "en", {}, only=("slow_rank",))[0][0]["evidence"] == en["evidence"]


def test_the_ranks_view_data_follow_the_language(fixtures):
    """The viewer's Ranks view reads slow_ranks / parallel_groups / slow_links over the analysis
    route: ``?lang=zh`` words their evidence in Chinese (English by default)."""
    import json
    import urllib.request

    from profinsight.server import make_app
    from profinsight.server.threaded import serve_in_thread

    path = fixtures / QWEN
    with serve_in_thread(make_app([path], token="t")) as base:

        def get(q: str) -> dict:
            req = urllib.request.Request(f"{base}/api/profiles/qwen3_level2_4rank/analyses/{q}")
            req.add_header("Authorization", "token t")
            with urllib.request.urlopen(req) as r:
                return json.loads(r.read())

        for lang, words in (("en", GROUP_EN), ("zh", GROUP_ZH)):
            rows = get(f"parallel_groups?lang={lang}")["rows"]
            assert words in [r["evidence"] for r in rows]
        assert GROUP_EN in [r["evidence"] for r in get("parallel_groups")["rows"]]


def test_ranks_in_chinese_on_a_real_job(fixtures, capsys):
    """``profinsight ranks --lang zh`` on qwen3_level2_4rank crashed ("boolean value of NA is
    ambiguous": a group without a slow rank)."""
    assert main(["ranks", str(fixtures / QWEN), "--lang", "zh"]) == 0
    out = capsys.readouterr().out.replace("\n", "")
    assert "4 个 rank：没有突出的 rank（阈值 3 个 MAD）。 并行通信组中：" in out
    assert GROUP_ZH in out


def test_the_compare_verdict_is_said_in_chinese(fixtures, capsys):
    """The noise verdict of ``compare --lang zh`` was Chinese, the explanation after it English
    ("Compute fell by ..., Device busy ...")."""
    leg = fixtures / K / "legacy"
    a, b = str(leg / "resnet50_tb_plugin_2021.json.gz"), str(leg / "resnet50_json_array.json.gz")
    cmp = profinsight.compare(a, b, lang="zh")
    assert cmp.verdicts()[0] == (
        "resnet50_json_array.json.gz 对比 resnet50_tb_plugin_2021.json.gz：性能回退：设备侧迭代时间增加 44,334.3 us（+36.1%），"
        "超过运行间噪声 ±28,294.3 us（95%，6 对 6 步）。 计算减少 2,361.0 us，主要是卷积（-4,130.3 us），"
        "迭代却增加了 44,334.3 us：未被掩盖的通信 +0.0 us，设备空闲 +46,695.3 us。 "
        "第一个设备任务在主机侧迭代开始后晚 4,716.2 us 启动（主机侧准备，在迭代之外）。 "
        "设备忙碌 87.3% -> 62.5%，计算 87.3% -> 62.5%（占迭代）。"
    )
    en = profinsight.compare(a, b, lang="en").verdicts()[0]
    assert "Compute fell by 2,361.0 us, mostly convolution (-4,130.3 us), yet the step grew by 44,334.3 us" in en
    assert list(cmp.waterfall()["label"])[:3] == ["格式转换", "矩阵 / Cube", "卷积"]
    assert main(["compare", a, b, "--lang", "zh"]) == 0  # the terminal tables' titles too
    out = capsys.readouterr().out
    assert "各次运行的迭代（每步均值，us）" in out and "瀑布图 resnet50_tb_plugin_2021.json.gz" in out
    assert "Waterfall" not in out and "Step per run" not in out and "Compute fell" not in out
    assert main(["compare", a, b, "--lang", "zh", "--format", "json"]) == 0
    import json

    v = json.loads(capsys.readouterr().out)["verdicts"][0]
    assert v["kind"] == "regression" and v["text"].startswith("resnet50_json_array.json.gz 对比")


def test_check_is_said_in_chinese(fixtures, capsys):
    leg = fixtures / K / "legacy"
    args = [
        "check",
        str(leg / "resnet50_json_array.json.gz"),
        "--baseline",
        str(leg / "resnet50_tb_plugin_2021.json.gz"),
    ]
    assert main([*args, "--max-step-regression", "5%", "--lang", "zh"]) == 1
    out = capsys.readouterr().out
    assert "平均迭代（step_us）167,287.5 us，基线 122,953.2 us：+36.1%，超出 5.0% 的预算 31.1% 个百分点" in out
    assert "1 项预算中有 1 项超出" in out


def _with_device(src, dst, name: str):
    """A copy of a Kineto trace that says which GPU recorded it (``deviceProperties``)."""
    import gzip
    import json

    with gzip.open(src, "rt", encoding="utf-8") as f:
        d = json.load(f)
    d["deviceProperties"] = [{"id": 0, "name": name, "computeMajor": 8 if "A100" in name else 7}]
    with gzip.open(dst, "wt", encoding="utf-8") as f:
        json.dump(d, f)
    return dst


def test_an_a100_rank_and_a_v100_rank_are_not_one_job(fixtures, tmp_path, capsys):
    """The two ranks of gpu_2rank, one said to run on an A100 and the other on a V100 (a crafted
    variant: the fixture names no device): ``doctor`` said "no problems found" and ``compare``
    set the two side by side without a word on the hardware."""
    a = _with_device(fixtures / K / "gpu_2rank_rank0.json.gz", tmp_path / "a100.json.gz", "NVIDIA A100-SXM4-80GB")
    v = _with_device(fixtures / K / "gpu_2rank_rank1.json.gz", tmp_path / "v100.json.gz", "Tesla V100-SXM2-32GB")
    assert main(["doctor", str(a), str(v)]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert (
        "these ranks do not look like one job: devices differ: rank 0 NVIDIA A100-SXM4-80GB, rank 1 Tesla V100-SXM2-32GB"
        in " ".join(out.split())
    )
    w = {
        x["code"]: x
        for x in profinsight.compare(a, v, names=["a100", "v100"], lang="en").noise_verdicts()[0]["comparability"]
    }
    assert w["hardware"]["message"] == "different hardware (NVIDIA A100-SXM4-80GB vs Tesla V100-SXM2-32GB)"


def test_device_idle_and_idle_gaps_name_what_they_measure(fixtures):
    """qwen3_level2_4rank: the verdict's idle and the gap finding's differed (then 19.9% vs 16.5%)
    with no word on why.  The verdict says "device idle" (all time the device runs nothing) and
    the gap finding "idle gaps of at least 50 us" — a part of it, never more; the communication
    wait is a share "of their elapsed time", not of the step."""
    rep = guided_report(profinsight.load(fixtures / QWEN), "en")
    v = rep["verdict"]
    assert v["text"] == (
        "Per step (mean over 4 rank-steps, 809.9 ms): compute 39.0%, communication not overlapped 43.2%, "
        "device idle 17.7% of the step."
    )
    f = {x["rule"]: x for x in rep["findings"]}
    assert f["idle_gaps"]["message"].startswith(
        "The device idles 16.5% of the step in 860 idle gaps of at least 50 us (133.3 ms per step)"
    )
    assert "wait 87.0 ms (24.8%), idle 263.2 ms (75.2%)" in f["communication_overlap"]["message"]
    assert "(0.0% of their elapsed time)" in f["communication_overlap"]["message"]


def test_no_recoverable_time_exceeds_the_step(fixtures, monkeypatch):
    """The data-loader rule once offered 7100000000000.0% of a step (rank_non_gpu): whatever a
    rule estimates, the advisor caps it at the mean step it is a share of.  A rule that claims
    ten steps (crafted beside the real ones) on text_level1 recovers one step, 100%."""
    from profinsight.advisor import core
    from profinsight.advisor.rules import RULES
    from profinsight.advisor.rules.base import Hit, Rule

    def greedy(ctx, th):
        return Hit({}, {}, 10 * ctx.step_us)

    monkeypatch.setitem(RULES, "greedy", Rule("greedy", greedy, "high", "data_host"))
    p = profinsight.load(fixtures / "ascend_pt/text_level1")
    (h,) = [h for h in core.hits(p, only=("greedy",))["hits"]]
    step = float(p.step_breakdown()["step_us"].mean())  # the mean of its two rank-steps
    assert step == pytest.approx(134246.812, abs=1e-3)
    assert h["recoverable_us"] == pytest.approx(step, abs=1e-3) and h["share_of_step_ratio"] == 1.0
