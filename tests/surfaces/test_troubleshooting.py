"""docs/troubleshooting.md, row by row: each symptom's diagnostic or finding is emitted on a real
fixture or a variant of one made in tmp_path, its words are in the catalogue in English and
Chinese, and every code the page names is in the catalogue."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from _support import REPO

import profinsight
from profinsight.cli import main
from profinsight.errors import NotAProfile, UnsupportedFormat
from profinsight.i18n import MESSAGES
from profinsight.i18n.diagnostics import DIAG, localize, template_regex, variants

DOC = REPO / "docs" / "troubleshooting.md"
TEXT1 = "ascend_pt/text_level1/rank0_ascend_pt"
QWEN = "ascend_llm/qwen3_level2_4rank"


def by_code(prof, code):
    return [d for d in prof.diagnostics if d.code == code]


def matches_catalogue(d) -> str:
    """The catalogue key whose English template is exactly ``d``'s message (and fix)."""
    for key in variants(d.code):
        if template_regex(DIAG["en"][key]).match(d.message):
            fix = DIAG["en"].get(key + ".fix")
            assert fix is None or d.fix is None or template_regex(fix).match(d.fix), (d.fix, fix)
            return key
    raise AssertionError(f"{d.code}: no catalogue template matches {d.message!r}")


def rank_copy(fixtures, src: str, tmp_path: Path, name: str = "rank0_ascend_pt") -> Path:
    dst = tmp_path / name
    shutil.copytree(fixtures / src, dst)
    return dst


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


# --- the page and the catalogue ----------------------------------------------------------------
def doc_sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_every_row_of_the_page_names_codes_that_are_in_the_catalogue():
    sections = doc_sections()
    assert len(sections) == 13, list(sections)
    for title, body in sections.items():
        m = re.search(r"^Codes: (.+)$", body, flags=re.M)
        assert m, f"{title}: no 'Codes:' line"
        codes = re.findall(r"`([^`]+)`", m.group(1))
        assert codes, title
        for code in codes:
            # a diagnostic (diag.<code>), an advisor finding (<rule>.title) or a viewer label (ui.*)
            keys = [f"diag.{code}", f"{code}.title", code]
            found = [k for k in keys if k in MESSAGES["en"] and k in MESSAGES["zh"]]
            assert found, f"{title}: {code} is not in the catalogue (en and zh)"
        assert "**en**" in body and "**zh**" in body, f"{title}: the message in both languages"


def test_every_catalogue_entry_has_both_languages_and_the_same_placeholders():
    assert set(DIAG["en"]) == set(DIAG["zh"])
    for key, en in DIAG["en"].items():
        assert set(re.findall(r"\{(\w+)\}", en)) == set(re.findall(r"\{(\w+)\}", DIAG["zh"][key])), key


def test_the_page_quotes_the_catalogue_word_for_word():
    text = DOC.read_text(encoding="utf-8")
    for lang in ("en", "zh"):
        for key, value in DIAG[lang].items():
            if not key.endswith(".fix"):
                assert value in text, f"docs/troubleshooting.md does not quote {key} ({lang})"


# --- 1. empty views ---------------------------------------------------------------------------
def test_empty_views_name_the_missing_file_and_load_the_rest(fixtures, tmp_path):
    rank = rank_copy(fixtures, TEXT1, tmp_path)
    (rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    prof = profinsight.load(rank)
    (d,) = [d for d in by_code(prof, "missing-file") if "kernel_details.csv" in d.message]
    assert matches_catalogue(d) == "diag.missing-file" and d.severity == "warning"
    assert "analyse(<rank folder>)" in d.fix
    assert len(prof.table("host_ops")) > 0  # what is readable is loaded
    message, _ = localize(d.code, d.message, d.fix, "zh")
    assert message.startswith("kernel_details.csv 缺失：")


def test_unparsed_raw_data_names_the_offline_parse_call(tmp_path, capsys):
    rank = tmp_path / "w_1_ascend_pt"
    (rank / "FRAMEWORK").mkdir(parents=True)
    with pytest.raises(NotAProfile) as exc:
        profinsight.load(rank)
    err = exc.value
    assert template_regex(DIAG["en"]["diag.not-parsed"]).match(err.args[0])
    assert template_regex(DIAG["en"]["diag.not-parsed.fix"]).match(err.fix)
    assert f"from torch_npu.profiler.profiler import analyse; analyse('{rank}')" in err.fix
    assert main(["doctor", str(rank), "--lang", "en"]) == 2
    assert "never parsed" in capsys.readouterr().err
    assert main(["doctor", str(rank), "--lang", "zh"]) == 2
    zh = capsys.readouterr().err
    assert zh.startswith("profinsight: w_1_ascend_pt 中是从未解析过的 profiler 原始数据（没有 ASCEND_PROFILER_OUTPUT）")
    assert (
        f"处理方法: 运行离线解析：python -c \"from torch_npu.profiler.profiler import analyse; analyse('{rank}')\""
        in zh
    )


def test_a_path_that_does_not_exist_is_said_in_the_language_asked_for(tmp_path, capsys):
    missing = tmp_path / "no_such_ascend_pt"
    with pytest.raises(NotAProfile) as exc:
        profinsight.load(missing)
    assert template_regex(DIAG["en"]["diag.no-such-path"]).match(exc.value.args[0])
    assert template_regex(DIAG["en"]["diag.no-such-path.fix"]).match(exc.value.fix)
    assert main(["analyze", str(missing), "--lang", "zh"]) == 2
    assert capsys.readouterr().err == (
        f"profinsight: 没有这个文件或文件夹：{missing}\n"
        "处理方法: 检查路径；profile 是一个 *_ascend_pt 文件夹、包含这类文件夹的文件夹，或一个 Kineto .json/.json.gz trace 文件\n"
    )
    assert main(["analyze", str(missing), "--lang", "en"]) == 2
    assert capsys.readouterr().err.startswith(f"profinsight: no such file or folder: {missing}\nFix: check the path;")


def test_msprof_never_exported_names_the_export_call(fixtures, tmp_path, capsys):
    src = next((fixtures / "msprof/prof_timeline_2023").glob("PROF_*"))
    raw = tmp_path / src.name
    shutil.copytree(src, raw, ignore=shutil.ignore_patterns("timeline"))
    with pytest.raises(UnsupportedFormat) as exc:
        profinsight.load(raw)
    assert exc.value.fix.startswith(f"run msprof --export=on --output={raw}")
    assert template_regex(DIAG["en"]["diag.not-exported"]).match(exc.value.args[0])
    assert template_regex(DIAG["en"]["diag.not-exported.fix"]).match(exc.value.fix)
    assert main(["doctor", str(raw), "--lang", "zh"]) == 2
    zh = capsys.readouterr().err
    assert zh.startswith(f"profinsight: {raw.name} 是 CANN msprof 采集，其原始数据从未导出（device_")
    assert f"处理方法: 运行 msprof --export=on --output={raw}（CANN 工具包" in zh


# --- 2. viewer slow: a capture larger than needed ------------------------------------------------
def test_a_capture_of_many_steps_says_how_many_and_the_shorter_schedule(fixtures):
    prof = profinsight.load(fixtures / "msprof/prof_timeline_2023")
    (d,) = by_code(prof, "capture-large")
    assert matches_catalogue(d) == "diag.capture-large"
    assert d.message.startswith("The capture holds 10 profiled steps (4,910 device tasks)")
    assert "schedule(wait=1, warmup=1, active=2, repeat=1)" in d.fix
    assert not by_code(profinsight.load(fixtures / "ascend_pt/text_level1"), "capture-large")  # one step


# --- 3. no call stacks --------------------------------------------------------------------------
def test_no_call_stacks_gives_the_flag(fixtures, tmp_path):
    (d, *_) = by_code(profinsight.load(fixtures / QWEN / "rank_0_ascend_pt"), "no-call-stacks")
    assert matches_catalogue(d) == "diag.no-call-stacks" and "with_stack=True" in d.fix
    rank = rank_copy(fixtures, "ascend_pt/db_level1/rank0_ascend_pt", tmp_path)
    info = next(rank.glob("profiler_info*.json"))
    edit_json(info, lambda j: j["config"]["common_config"].update(with_stack=False))
    (d,) = by_code(profinsight.load(rank), "no-call-stacks")
    assert matches_catalogue(d) == "diag.no-call-stacks#2"
    assert localize(d.code, d.message, d.fix, "zh")[0] == DIAG["zh"]["diag.no-call-stacks#2"]


def test_attribution_views_say_unattributed_no_stack_collected(fixtures):
    prof = profinsight.load(fixtures / QWEN / "rank_0_ascend_pt")  # collected without with_stack
    code, mods = prof.code_time(), prof.module_time()
    assert set(code["frame"]) == {"(unattributed)"} and set(mods["path"]) == {"(unattributed)"}
    assert set(code["reason"]) == {"no Python frames recorded (collect with with_stack=True)"}
    assert set(mods["reason"]) == {"no nn.Module frames recorded (collect with with_stack=True or with_modules=True)"}
    assert code["self_us"].sum() == pytest.approx(651464.36, abs=0.01)
    text = DOC.read_text(encoding="utf-8")
    assert "no Python frames recorded (collect with with_stack=True)" in text and "651,464.36 us" in text


# --- 4. AI Core utilisation low / 5. slower than the GPU ------------------------------------------
def test_low_utilisation_shows_gaps_tiny_kernels_and_what_the_host_did(fixtures):
    adv = profinsight.load(fixtures / "kineto/legacy/resnet50_tb_plugin_2021.json.gz").advise()
    fired = set(adv[adv["severity"] != "not_applicable"]["rule"])
    assert {"idle_gaps", "tiny_kernels", "dataloader"} <= fired


def test_slower_than_gpu_shows_the_conversion_share(fixtures):
    # the GPU-vs-NPU op-by-op compare of the same model: tests/comparison/test_framework.py
    prof = profinsight.load(fixtures / "ascend_pt/text_level0")
    adv = prof.advise()
    (row,) = adv[(adv["rule"] == "format_conversion") & (adv["severity"] != "not_applicable")].itertuples()
    assert row.message.startswith("Layout conversions take 17.0% of compute (TransData alone 15.7%)")
    fc = prof.format_conversions().set_index("type")
    assert fc.loc["TransData", "count"] == 114  # 57 per rank, 2 ranks
    assert fc.loc["TransData", "share_of_compute_ratio"] == pytest.approx(0.157184, abs=1e-6)


# --- 6. PMU / IPC empty -------------------------------------------------------------------------
@pytest.mark.parametrize("fixture", ["ascend_pt/text_level0", "ascend_pt/db_level0"])
def test_pmu_not_collected_at_level0(fixtures, fixture):
    prof = profinsight.load(fixtures / fixture)
    found = by_code(prof, "pmu-not-collected")
    assert sorted(d.rank for d in found) == [0, 1]
    assert all(matches_catalogue(d) == "diag.pmu-not-collected" for d in found)
    assert "at Level0 with aic_metrics=ACL_AICORE_NONE" in found[0].message
    assert "aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization" in found[0].fix
    assert not by_code(prof, "pmu-empty")


@pytest.mark.parametrize("fixture", ["ascend_pt/text_level1", "ascend_pt/db_level1", QWEN])
def test_pmu_collected_is_silent(fixtures, fixture):
    prof = profinsight.load(fixtures / fixture)
    assert not by_code(prof, "pmu-not-collected") and not by_code(prof, "pmu-empty")


def test_pmu_set_but_empty_is_a_permission_problem(fixtures, tmp_path):
    import pwd

    rank = rank_copy(fixtures, TEXT1, tmp_path)
    kd = rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with kd.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    keep = rows[0].index("aicore_time(us)")  # every AI Core metric column starts here
    with kd.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(r[:keep] for r in rows)
    (d,) = by_code(profinsight.load(rank), "pmu-empty")
    assert matches_catalogue(d) == "diag.pmu-empty" and d.severity == "warning"
    user = pwd.getpwuid(rank.stat().st_uid).pw_name
    assert d.message.startswith("aic_metrics=ACL_AICORE_PIPE_UTILIZATION was set at Level1, but every AI Core PMU ")
    assert "of the 187 kernels" in d.message and f"belongs to user {user})" in d.message
    assert "permission" in d.fix


# --- 7. JupyterLab entry missing ------------------------------------------------------------------
def test_doctor_env_says_the_jupyterlab_extension_is_missing(tmp_path, monkeypatch):
    pytest.importorskip("jupyter_server")
    from profinsight.cli.env_checks import jupyter_checks

    (tmp_path / "cfg").mkdir()
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "data"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr("profinsight.cli.env_checks._labextension_dirs", lambda: [])
    found = {d.code: d for d in jupyter_checks()}
    assert matches_catalogue(found["labextension-missing"]) == "diag.labextension-missing"
    ext = tmp_path / "data" / "labextensions" / "profinsight"
    ext.mkdir(parents=True)
    (ext / "package.json").write_text(json.dumps({"name": "profinsight", "version": "0.0.1"}))
    monkeypatch.undo()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "data"))
    found = {d.code: d for d in jupyter_checks()}
    assert matches_catalogue(found["labextension-version"]) == "diag.labextension-version"


def test_doctor_env_without_jupyter_says_so(monkeypatch):
    from profinsight.cli import env_checks

    real = env_checks._version
    monkeypatch.setattr(env_checks, "_version", lambda d: None if d.startswith("jupyter") else real(d))
    (d,) = env_checks.jupyter_checks()
    assert d.code == "jupyter-absent" and matches_catalogue(d) == "diag.jupyter-absent"


# --- 8. versions mixed or untested ----------------------------------------------------------------
def test_mixed_and_untested_versions(fixtures, tmp_path):
    run = tmp_path / "run"
    for name in ("rank_0_ascend_pt", "rank_2_ascend_pt"):
        shutil.copytree(fixtures / QWEN / name, run / name)
    assert not by_code(profinsight.load(run), "versions-differ")  # 2.7.1 / 8.3.RC1 everywhere, tested
    assert not by_code(profinsight.load(run), "version-untested")
    edit_json(run / "rank_2_ascend_pt/profiler_info_2.json", lambda j: j.update(cann_version="9.0.RC1"))
    prof = profinsight.load(run)
    (d,) = by_code(prof, "versions-differ")
    assert matches_catalogue(d) == "diag.versions-differ"
    assert "rank 0: {'cann_version': '8.3.RC1'" in d.message and "rank 2: {'cann_version': '9.0.RC1'" in d.message
    (u,) = by_code(prof, "version-untested")
    assert u.message == "CANN 9.0.RC1 is newer than the releases profinsight is tested with (8.0 to 8.3): " + (
        "its files may have changed shape"
    )
    assert localize(u.code, u.message, u.fix, "zh")[0].startswith(
        "CANN 9.0.RC1 比 profinsight 测试过的版本（8.0 至 8.3）更"
    )


# --- 9. the wrong card ----------------------------------------------------------------------------
def test_one_rank_of_many_says_partial_ranks(fixtures):
    (d,) = by_code(profinsight.load(fixtures / QWEN / "rank_0_ascend_pt"), "partial-ranks")
    assert d.message == "1 of 4 ranks of the job were loaded" and matches_catalogue(d) == "diag.partial-ranks"


def test_the_advisor_names_the_slow_rank(fixtures):
    sys.path.insert(0, str(REPO / "tests" / "comparison"))
    import _build as B
    import pyarrow as pa
    from test_ranks import SLOW, _slow_copy

    tables = B.tables_of(profinsight.load(fixtures / TEXT1))
    slow, _ = _slow_copy(tables, SLOW)
    per_rank = [slow if r == SLOW else tables for r in range(4)]
    merged = {
        n: pa.concat_tables([B.with_rank(t[n], r) for r, t in enumerate(per_rank)])
        if "rank" in tables[n].column_names
        else tables[n]
        for n in B.TABLES
    }
    adv = B.profile(merged).advise()
    row = adv[adv["rule"] == "slow_rank"].iloc[0]
    assert row["message"].startswith(f"Rank {SLOW} spends")


# --- 10. collection did not finish ----------------------------------------------------------------
def test_no_end_info_says_the_collection_did_not_finish(fixtures, tmp_path):
    rank = rank_copy(fixtures, TEXT1, tmp_path)
    edit_json(rank / "profiler_info_0.json", lambda j: j.pop("end_info"))
    prof = profinsight.load(rank)
    (d,) = by_code(prof, "collection-unfinished")
    assert matches_catalogue(d) == "diag.collection-unfinished" and d.severity == "warning"
    assert "profiler_info_0.json has no end_info" in d.message and "nohup python train.py" in d.fix
    assert len(prof.table("device_tasks")) == 539  # the rest still loads


def test_a_truncated_trace_says_the_collection_did_not_finish(fixtures, tmp_path):
    rank = rank_copy(fixtures, TEXT1, tmp_path)
    tv = rank / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    tv.write_bytes(tv.read_bytes()[: tv.stat().st_size // 2])
    (d,) = by_code(profinsight.load(rank), "collection-unfinished")
    assert matches_catalogue(d) == "diag.collection-unfinished#2"
    assert "trace_view.json is cut short" in d.message and "nohup" in d.fix


def test_raw_data_without_analyse_done_says_the_parse_did_not_finish(fixtures, tmp_path):
    assert not by_code(profinsight.load(fixtures / QWEN / "rank_0_ascend_pt"), "collection-unfinished")
    rank = rank_copy(fixtures, QWEN + "/rank_0_ascend_pt", tmp_path / "raw", "rank_0_ascend_pt")
    (rank / "FRAMEWORK").mkdir()
    (d,) = by_code(profinsight.load(rank), "collection-unfinished")
    assert matches_catalogue(d) == "diag.collection-unfinished#3"
    assert f"The offline parse did not finish: {rank} holds the raw data" in d.message and "2.7.1" in d.message
    assert d.fix.startswith("parse again outside the notebook: nohup python -c") and f"analyse('{rank}')" in d.fix
    done = rank_copy(fixtures, QWEN + "/rank_0_ascend_pt", tmp_path / "done", "rank_0_ascend_pt")
    (done / "FRAMEWORK").mkdir()
    (done / "ASCEND_PROFILER_OUTPUT" / "analyse.done").write_text("")
    assert not by_code(profinsight.load(done), "collection-unfinished")


def test_finished_collections_are_silent(fixtures):
    for sub in ("text_level0", "text_level1", "db_level0", "db_level1"):
        assert not by_code(profinsight.load(fixtures / "ascend_pt" / sub), "collection-unfinished")


# --- 11. ASCEND_GLOBAL_EVENT_ENABLE ----------------------------------------------------------------
def test_global_event_recorded_in_the_profile(fixtures, tmp_path):
    rank = rank_copy(fixtures, TEXT1, tmp_path)
    assert not by_code(profinsight.load(rank), "global-event-recorded")
    edit_json(rank / "profiler_metadata.json", lambda j: j["ENV_VARIABLES"].update(ASCEND_GLOBAL_EVENT_ENABLE="1"))
    (d,) = by_code(profinsight.load(rank), "global-event-recorded")
    assert matches_catalogue(d) == "diag.global-event-recorded" and d.file.endswith("profiler_metadata.json")
    assert "ASCEND_GLOBAL_EVENT_ENABLE=1" in d.message


def test_global_event_in_the_environment(monkeypatch, capsys):
    from profinsight.cli.env_checks import env_var_checks

    monkeypatch.setenv("ASCEND_GLOBAL_EVENT_ENABLE", "1")
    (d,) = [d for d in env_var_checks() if d.code == "global-event-enabled"]
    assert matches_catalogue(d) == "diag.global-event-enabled" and d.severity == "warning"
    monkeypatch.setenv("ASCEND_GLOBAL_EVENT_ENABLE", "0")
    assert not [d for d in env_var_checks() if d.code == "global-event-enabled"]


# --- 12. memory: no host memory ---------------------------------------------------------------------
def test_memory_view_says_host_memory_is_not_in_the_data():
    for lang in ("en", "zh"):
        assert MESSAGES[lang]["ui.memory.host_note"]
    assert "ui.memory.host_note" in (REPO / "ts/app/views/memory.ts").read_text(encoding="utf-8")


# --- the doctor in Chinese ----------------------------------------------------------------------------
def test_doctor_speaks_chinese(fixtures, capsys):
    assert main(["doctor", str(fixtures / "ascend_pt/text_level0"), "--lang", "zh", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    pmu = [d for d in out if d["code"] == "pmu-not-collected"]
    assert len(pmu) == 2 and pmu[0]["message"].startswith("没有 AI Core PMU 指标")
    assert pmu[0]["fix"].startswith("采集时设置 experimental_config=")


# --- the JupyterLab sidebar's status in the chosen language ---------------------------------------------
def test_the_sidebar_listing_speaks_the_chosen_language(fixtures, tmp_path):
    from profinsight.server.store import ProfileStore, localized_listing

    shutil.copytree(fixtures / "ascend_pt/text_level0", tmp_path / "root" / "run")
    (tmp_path / "root" / "w_1_ascend_pt" / "FRAMEWORK").mkdir(parents=True)
    store = ProfileStore(root=tmp_path / "root")
    (run,) = store.runs()["runs"]
    store.describe(run["id"])  # loaded: the listing's status now holds the load checks
    listing = store.runs()
    zh = localized_listing(listing, "zh")
    pmu = [d for d in zh["runs"][0]["diagnostics"] if d["code"] == "pmu-not-collected"]
    assert len(pmu) == 2 and pmu[0]["message"].startswith("没有 AI Core PMU 指标")
    (problem,) = zh["problems"]
    assert problem["error"] == "w_1_ascend_pt 中是从未解析过的 profiler 原始数据（没有 ASCEND_PROFILER_OUTPUT）"
    assert problem["fix"].startswith("运行离线解析：")
    en = [d for d in listing["runs"][0]["diagnostics"] if d["code"] == "pmu-not-collected"]
    assert en[0]["message"].startswith("No AI Core PMU metrics")  # the kept listing is unchanged
    assert "lang: this.labels.lang" in (REPO / "ts/lab/sidebar.ts").read_text(encoding="utf-8")
