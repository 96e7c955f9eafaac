"""The diagnostics of the troubleshooting table (docs/troubleshooting.md), in English and Chinese:
``diag.<code>`` is the message, ``diag.<code>.fix`` the fix; a code whose message comes in several
shapes adds variants ``diag.<code>#<n>``.  New checks format their English message from here, so
the catalogue is the message; older checks write theirs in place and the catalogue holds the same
text (tests/surfaces/test_troubleshooting.py proves each template matches what is emitted).

:func:`localize` turns an emitted diagnostic into another language: the English template whose
shape matches the message gives the values back, and the other language's template is filled with
them.  A message no template matches stays as it was written."""

from __future__ import annotations

import re

_LEVEL1 = "torch_npu.profiler.ProfilerLevel.Level1"
_PIPE = "torch_npu.profiler.AiCMetrics.PipeUtilization"
_NOHUP = "nohup python train.py > train.log 2>&1 &"
_SCHEDULE = "schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)"

DIAG: dict[str, dict[str, str]] = {
    "en": {
        # empty views
        "diag.missing-file": "{name} is missing: {loss}.",
        "diag.msprof-not-exported": "{folders} of {prof} hold raw data only (never exported): those ranks are not loaded",
        "diag.msprof-not-exported.fix": "run {command}, then load {prof} again",
        # the errors of an input that is not parsed / exported yet (raised, not emitted: ERROR_CODES)
        "diag.no-such-path": "no such file or folder: {path}",
        "diag.no-such-path.fix": "check the path; a profile is a *_ascend_pt folder, a folder of them, or a Kineto "
        ".json/.json.gz trace",
        "diag.not-parsed": "{name} holds raw profiler data that was never parsed (no ASCEND_PROFILER_OUTPUT)",
        "diag.not-parsed.fix": 'run the offline parse: python -c "from torch_npu.profiler.profiler import analyse; '
        "analyse('{path}')\" (it writes ASCEND_PROFILER_OUTPUT)",
        "diag.not-exported": "{prof} is a CANN msprof collection whose raw data was never exported ({what}: no "
        "timeline/ folder); once exported it loads as one rank per device with its device tasks (kernels, HCCL "
        "communication and its tasks), one step per iteration, and the collectives",
        "diag.not-exported.fix": "run {command} (CANN toolkit; it writes device_<n>/timeline/ and summary/), then "
        "load the PROF_* folder again",
        # consistency of one rank's files (importers/checks.py)
        "diag.collections-apart": "the device tasks ({device_from}) and the host activity ({host_from}) of rank "
        "{rank} lie {apart} apart without overlapping: the files come from different collections, so every "
        "link between host and device (launches, host-side preparing, the host activity of idle gaps) is "
        "meaningless",
        "diag.collections-apart.fix": "load files of one collection: export the rank folder again, or keep "
        "only the files the same run wrote",
        "diag.tasks-outside-capture": "{count} {what} of rank {rank} lie outside the capture window that "
        "{window_from} records ({start} to {end}), the first {first}: their times are damaged or come from "
        "another collection",
        "diag.tasks-outside-capture.fix": "export the rank folder again; where files of several runs were "
        "mixed, keep the files of one",
        "diag.tasks-duplicated": "{count} device task(s) of rank {rank} ({source}) are exact copies of another (same kind, "
        "stream, name, start and duration; the first {first}): every total counts them twice",
        "diag.tasks-duplicated.fix": "export the rank folder again (a copy-paste or a merge of two exports "
        "duplicates rows)",
        "diag.rows-vs-vendor": "rank {rank} loaded {loaded} kernel(s) from {source} where the vendor's {file} counts {vendor}; "
        "{types} op type(s) differ ({examples}): rows were lost or added since the export",
        "diag.rows-vs-vendor.fix": "export the rank folder again: the kernel rows and the vendor's statistics "
        "come from one export",
        # viewer slow: a capture larger than needed
        "diag.capture-large": "The capture holds {steps} profiled steps ({tasks} device tasks): one to three steps show "
        "the same picture, and every extra step makes collecting, parsing and viewing slower.",
        "diag.capture-large.fix": f"profile fewer steps: {_SCHEDULE} (torch.profiler.schedule on a GPU), and call "
        "prof.step() once per iteration",
        # no call stacks
        "diag.no-call-stacks": "Collected without with_stack: host ops have no Python call stacks.",
        "diag.no-call-stacks.fix": "Pass with_stack=True to torch_npu.profiler.profile(...).",
        "diag.no-call-stacks#2": "with_stack was off: no Python call stacks",
        "diag.no-call-stacks#2.fix": "pass with_stack=True to torch_npu.profiler.profile",
        # PMU / IPC empty
        "diag.pmu-not-collected": "No AI Core PMU metrics (IPC, pipe utilisation, cube and vector ratios): the profile "
        "was collected at {level} with aic_metrics={aic_metrics}, which records none.",
        "diag.pmu-not-collected.fix": "collect with experimental_config=torch_npu.profiler._ExperimentalConfig("
        f"profiler_level={_LEVEL1}, aic_metrics={_PIPE})",
        "diag.pmu-empty": "aic_metrics={aic_metrics} was set at {level}, but every AI Core PMU column of the {kernels} "
        "kernels is empty: the profiler could not read the hardware counters, which happens when the job runs "
        "without permission to them (the profile's folder belongs to user {user}).",
        "diag.pmu-empty.fix": "run the job as a user allowed to read the NPU's performance counters (root, or a member "
        "of the group the driver was installed for, HwHiAiUser by default) with write permission to the profiler's "
        "output folder, then collect again",
        # JupyterLab entry missing (doctor --env)
        "diag.jupyter-absent": "jupyter_server is not installed: the JupyterLab extension is unused",
        "diag.jupyter-absent.fix": "pip install jupyterlab (profinsight's extension is in this wheel already)",
        "diag.labextension-missing": "the profinsight JupyterLab extension is not installed: JupyterLab shows no "
        "Profiles sidebar",
        "diag.labextension-missing.fix": "reinstall with pip install profinsight (the wheel ships it); from a "
        "checkout: jlpm build && jupyter labextension develop --overwrite .",
        "diag.labextension-disabled": "the profinsight JupyterLab extension is disabled",
        "diag.labextension-disabled.fix": "jupyter labextension enable profinsight",
        "diag.labextension-version": "the JupyterLab extension is {ext} but the Python package is {py}: the viewer "
        "and the server may not agree",
        "diag.labextension-version.fix": "pip install --force-reinstall profinsight; then restart Jupyter",
        "diag.server-extension-disabled": "server extension profinsight.jupyter is {state}: the sidebar and the "
        "viewer tab get no data",
        "diag.server-extension-disabled.fix": "jupyter server extension enable profinsight.jupyter (a pip install "
        "of the wheel enables it; an editable install may not)",
        "diag.jupyterlab-too-old": "JupyterLab {lab}: the profinsight extension is built for 4.6 and JupyterLab "
        "lists it as not compatible",
        "diag.jupyterlab-too-old.fix": "pip install 'jupyterlab>=4.6'",
        # versions mixed or untested
        "diag.versions-differ": "software versions differ across ranks: {detail}",
        "diag.versions-differ.fix": "install the same CANN / torch_npu / torch on every node",
        "diag.version-untested": "{name} {version} is {side} than the releases profinsight is tested with "
        "({low} to {high}): its files may have changed shape",
        "diag.version-untested.fix": "check what loaded against the vendor's own summary (step_trace_time.csv); "
        "report a difference with the profile's profiler_info_*.json",
        # wrong card
        "diag.partial-ranks": "{loaded} of {world} ranks of the job were loaded",
        "diag.partial-ranks.fix": "load the folder that holds every rank's profile to compare ranks",
        # collection did not finish
        "diag.collection-unfinished": "The collection did not finish: {file} has no end_info (the profiler was "
        "never stopped). What was written before the stop is loaded; the rest of the run is absent.",
        "diag.collection-unfinished.fix": "run long collections outside the notebook, where a lost kernel or "
        f"session cannot stop them: {_NOHUP}; then parse what was written with "
        "torch_npu.profiler.profiler.analyse('<rank folder>')",
        "diag.collection-unfinished#2": "The collection did not finish: {file} is cut short (the writer was "
        "stopped). What was written before the cut is loaded; the rest of the run is absent.",
        "diag.collection-unfinished#2.fix": "run long collections outside the notebook, where a lost kernel or "
        f"session cannot stop them: {_NOHUP}; let the profiler stop (prof.stop() or the end of its with block) "
        "before the process ends",
        "diag.collection-unfinished#3": "The offline parse did not finish: {folder} holds the raw data but "
        "ASCEND_PROFILER_OUTPUT has no analyse.done (torch_npu {version} writes it when the parse ends). What the "
        "parse wrote is loaded; its other files may be missing or incomplete.",
        "diag.collection-unfinished#3.fix": 'parse again outside the notebook: nohup python -c "from '
        "torch_npu.profiler.profiler import analyse; analyse('{folder}')\" > analyse.log 2>&1 &",
        # ASCEND_GLOBAL_EVENT_ENABLE
        "diag.global-event-enabled": "ASCEND_GLOBAL_EVENT_ENABLE={value}: CANN records every event, which slows the "
        "job and lengthens every step of a profile taken now",
        "diag.global-event-enabled.fix": "unset ASCEND_GLOBAL_EVENT_ENABLE (or export ASCEND_GLOBAL_EVENT_ENABLE=0) "
        "while profiling",
        "diag.global-event-recorded": "The run was recorded with ASCEND_GLOBAL_EVENT_ENABLE={value} "
        "(profiler_metadata.json, ENV_VARIABLES): full event capture slows the job, so its steps are longer than "
        "in production.",
        "diag.global-event-recorded.fix": "unset ASCEND_GLOBAL_EVENT_ENABLE (or export ASCEND_GLOBAL_EVENT_ENABLE=0) "
        "before the job starts, then collect again",
    },
    "zh": {
        "diag.missing-file": "{name} 缺失：{loss}。",
        "diag.msprof-not-exported": "{prof} 的 {folders} 只有原始数据（从未导出）：这些 rank 未加载",
        "diag.msprof-not-exported.fix": "运行 {command}，然后重新加载 {prof}",
        "diag.no-such-path": "没有这个文件或文件夹：{path}",
        "diag.no-such-path.fix": "检查路径；profile 是一个 *_ascend_pt 文件夹、包含这类文件夹的文件夹，或一个 Kineto "
        ".json/.json.gz trace 文件",
        "diag.not-parsed": "{name} 中是从未解析过的 profiler 原始数据（没有 ASCEND_PROFILER_OUTPUT）",
        "diag.not-parsed.fix": '运行离线解析：python -c "from torch_npu.profiler.profiler import analyse; '
        "analyse('{path}')\"（它会写出 ASCEND_PROFILER_OUTPUT）",
        "diag.not-exported": "{prof} 是 CANN msprof 采集，其原始数据从未导出（{what}：没有 timeline/ 目录）；导出后"
        "按每个设备一个 rank 加载，包含设备任务（kernel、HCCL 通信及其任务）、每次迭代一个 step，以及集合通信",
        "diag.not-exported.fix": "运行 {command}（CANN 工具包；它会写出 device_<n>/timeline/ 和 summary/），然后重新加载该 "
        "PROF_* 目录",
        "diag.collections-apart": "rank {rank} 的设备任务（{device_from}）与主机活动（{host_from}）相距 {apart} 且互不"
        "重叠：这些文件来自不同的采集，主机与设备之间的一切关联（下发、主机侧准备、空闲间隙中的主机活动）都没有意义",
        "diag.collections-apart.fix": "加载同一次采集的文件：重新导出该 rank 目录，或只保留同一次运行写出的文件",
        "diag.tasks-outside-capture": "rank {rank} 有 {count} 个{what}落在 {window_from} 记录的采集窗口（{start} 至 "
        "{end}）之外，第一个是 {first}：它们的时间已损坏或来自另一次采集",
        "diag.tasks-outside-capture.fix": "重新导出该 rank 目录；若混入了多次运行的文件，只保留其中一次的文件",
        "diag.tasks-duplicated": "rank {rank} 有 {count} 个设备任务（{source}）与另一个完全相同（类型、流、名称、开始时间和时长都相同；"
        "第一个是 {first}）：所有合计都把它们算了两次",
        "diag.tasks-duplicated.fix": "重新导出该 rank 目录（复制粘贴或合并两次导出会产生重复行）",
        "diag.rows-vs-vendor": "rank {rank} 从 {source} 加载了 {loaded} 个 kernel，而厂商的 {file} 统计为 {vendor}；{types} 个算子类型"
        "不一致（{examples}）：导出之后有行丢失或增加",
        "diag.rows-vs-vendor.fix": "重新导出该 rank 目录：kernel 行与厂商统计来自同一次导出",
        "diag.capture-large": "本次采集包含 {steps} 个被采集的 step（{tasks} 个设备任务）：一到三个 step 已能看出同样的问题，"
        "每多一个 step，采集、解析和查看都更慢。",
        "diag.capture-large.fix": f"少采集几个 step：{_SCHEDULE}（GPU 上用 torch.profiler.schedule），并在每次迭代调用一次 prof.step()",
        "diag.no-call-stacks": "采集时未开启 with_stack：主机算子没有 Python 调用栈。",
        "diag.no-call-stacks.fix": "在 torch_npu.profiler.profile(...) 中传入 with_stack=True。",
        "diag.no-call-stacks#2": "with_stack 未开启：没有 Python 调用栈",
        "diag.no-call-stacks#2.fix": "在 torch_npu.profiler.profile 中传入 with_stack=True",
        "diag.pmu-not-collected": "没有 AI Core PMU 指标（IPC、流水线利用率、cube 与 vector 占比）：采集时为 {level}、"
        "aic_metrics={aic_metrics}，这种设置不记录这些指标。",
        "diag.pmu-not-collected.fix": "采集时设置 experimental_config=torch_npu.profiler._ExperimentalConfig("
        f"profiler_level={_LEVEL1}, aic_metrics={_PIPE})",
        "diag.pmu-empty": "已设置 aic_metrics={aic_metrics}（{level}），但 {kernels} 个 kernel 的 AI Core PMU 列全部为空："
        "profiler 读不到硬件计数器，作业没有读取它们的权限时就会这样（profile 目录属于用户 {user}）。",
        "diag.pmu-empty.fix": "以有权读取 NPU 性能计数器的用户运行作业（root，或安装驱动时指定的用户组成员，默认 HwHiAiUser），"
        "并对 profiler 输出目录有写权限，然后重新采集",
        "diag.jupyter-absent": "未安装 jupyter_server：JupyterLab 扩展不会被使用",
        "diag.jupyter-absent.fix": "pip install jupyterlab（profinsight 的扩展已包含在本 wheel 中）",
        "diag.labextension-missing": "未安装 profinsight 的 JupyterLab 扩展：JupyterLab 中没有 Profiles 侧栏",
        "diag.labextension-missing.fix": "用 pip install profinsight 重新安装（wheel 中带有扩展）；源码检出时："
        "jlpm build && jupyter labextension develop --overwrite .",
        "diag.labextension-disabled": "profinsight 的 JupyterLab 扩展已被禁用",
        "diag.labextension-disabled.fix": "jupyter labextension enable profinsight",
        "diag.labextension-version": "JupyterLab 扩展版本为 {ext}，而 Python 包为 {py}：查看器与服务端可能不一致",
        "diag.labextension-version.fix": "pip install --force-reinstall profinsight，然后重启 Jupyter",
        "diag.server-extension-disabled": "服务端扩展 profinsight.jupyter {state}：侧栏和查看器标签页拿不到数据",
        "diag.server-extension-disabled.fix": "jupyter server extension enable profinsight.jupyter"
        "（pip 安装 wheel 时会自动启用；可编辑安装可能不会）",
        "diag.jupyterlab-too-old": "JupyterLab {lab}：profinsight 扩展为 4.6 构建，JupyterLab 会将其列为不兼容",
        "diag.jupyterlab-too-old.fix": "pip install 'jupyterlab>=4.6'",
        "diag.versions-differ": "各 rank 的软件版本不一致：{detail}",
        "diag.versions-differ.fix": "在每个节点上安装相同的 CANN / torch_npu / torch",
        "diag.version-untested": "{name} {version} 比 profinsight 测试过的版本（{low} 至 {high}）更{side}：其文件格式可能已变化",
        "diag.version-untested.fix": "将加载结果与厂商自己的汇总（step_trace_time.csv）核对；发现差异时附上该 profile 的 "
        "profiler_info_*.json 报告",
        "diag.partial-ranks": "加载了作业 {world} 个 rank 中的 {loaded} 个",
        "diag.partial-ranks.fix": "加载包含所有 rank profile 的目录，才能比较各 rank",
        "diag.collection-unfinished": "采集没有正常结束：{file} 中没有 end_info（profiler 从未停止）。"
        "已加载停止前写出的数据；之后的部分缺失。",
        "diag.collection-unfinished.fix": "在 notebook 之外运行长时间采集，这样 kernel 或会话丢失不会中断它："
        f"{_NOHUP}；然后用 torch_npu.profiler.profiler.analyse('<rank 目录>') 解析已写出的数据",
        "diag.collection-unfinished#2": "采集没有正常结束：{file} 被截断（写入被中断）。已加载截断前写出的数据；之后的部分缺失。",
        "diag.collection-unfinished#2.fix": "在 notebook 之外运行长时间采集，这样 kernel 或会话丢失不会中断它："
        f"{_NOHUP}；并在进程结束前让 profiler 停止（prof.stop() 或 with 块结束）",
        "diag.collection-unfinished#3": "离线解析没有完成：{folder} 中有原始数据，但 ASCEND_PROFILER_OUTPUT 中没有 analyse.done"
        "（torch_npu {version} 在解析结束时写出它）。已加载解析写出的数据；其他文件可能缺失或不完整。",
        "diag.collection-unfinished#3.fix": '在 notebook 之外重新解析：nohup python -c "from '
        "torch_npu.profiler.profiler import analyse; analyse('{folder}')\" > analyse.log 2>&1 &",
        "diag.global-event-enabled": "ASCEND_GLOBAL_EVENT_ENABLE={value}：CANN 记录全部事件，作业变慢，此时采集的 profile 中每个 step 都会变长",
        "diag.global-event-enabled.fix": "采集时 unset ASCEND_GLOBAL_EVENT_ENABLE（或 export ASCEND_GLOBAL_EVENT_ENABLE=0）",
        "diag.global-event-recorded": "该作业运行时 ASCEND_GLOBAL_EVENT_ENABLE={value}（profiler_metadata.json 的 ENV_VARIABLES）："
        "全量事件采集拖慢作业，其 step 比生产环境更长。",
        "diag.global-event-recorded.fix": "作业启动前 unset ASCEND_GLOBAL_EVENT_ENABLE（或 export ASCEND_GLOBAL_EVENT_ENABLE=0），然后重新采集",
    },
}

_FIELD = re.compile(r"\{(\w+)\}")


def template_regex(template: str) -> re.Pattern:
    """The English template as a pattern whose named groups capture its placeholders."""
    out, pos, seen = [], 0, set()
    for m in _FIELD.finditer(template):
        out.append(re.escape(template[pos : m.start()]))
        name = m.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out) + r"\Z", re.S)


def variants(code: str) -> list[str]:
    """The catalogue keys of ``code``'s message shapes: ``diag.<code>``, then ``diag.<code>#2``, ..."""
    base = f"diag.{code}"
    return [k for k in DIAG["en"] if k == base or (k.startswith(base + "#") and not k.endswith(".fix"))]


def localize(code: str, message: str, fix: str | None, lang: str) -> tuple[str, str | None]:
    """``message`` and ``fix`` of a diagnostic in ``lang`` (unchanged where no template matches)."""
    if lang == "en":
        return message, fix
    table = DIAG.get(lang, {})
    for key in variants(code):
        m = template_regex(DIAG["en"][key]).match(message or "")
        if not m or key not in table:
            continue
        values = m.groupdict()
        out_fix = fix
        en_fix = DIAG["en"].get(key + ".fix")
        if fix and en_fix:
            fm = template_regex(en_fix).match(fix)
            if fm and key + ".fix" in table:
                out_fix = table[key + ".fix"].format(**{**values, **fm.groupdict()})
        return table[key].format(**values), out_fix
    return message, fix


#: the catalogue codes of errors that stop a load (their message and fix come from the exception)
ERROR_CODES = ("no-such-path", "not-parsed", "not-exported")


def localize_error(message: str, fix: str | None, lang: str) -> tuple[str, str | None]:
    """An error's ``message`` and ``fix`` in ``lang``, where its shape is in the catalogue."""
    for code in ERROR_CODES:
        out = localize(code, message, fix, lang)
        if out != (message, fix):
            return out
    return message, fix
