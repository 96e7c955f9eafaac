"""The browser viewer's labels (keys ``ui.*``), part of the one message catalogue: merged into
:data:`profinsight.i18n.messages.MESSAGES`, served by ``GET api/messages?lang=``.  Placeholders
are plain ``{name}`` (the viewer fills them; no format specs)."""
from __future__ import annotations

UI: dict[str, dict[str, str]] = {"en": {
    # shell
    "ui.profile": "Profile",
    "ui.no_profiles": "No profiles are served. Start with: profinsight serve PATH",
    "ui.ranks_steps": "{ranks} rank(s), {steps} step(s)",
    "ui.loading": "Loading {id}",
    "ui.ranks_done": "{done} of {total} rank(s) ready",
    "ui.stage.importing": "importing the profile files (first open; later opens read the cache)",
    "ui.stage.cached": "reading the cache",
    "ui.error": "Could not show this",
    "ui.fix": "What to do",
    "ui.diag.errors": "{n} error(s)",
    "ui.diag.warnings": "{n} warning(s)",
    "ui.diag.infos": "{n} note(s)",
    # views
    "ui.view.overview": "Overview",
    "ui.view.operators": "Operators",
    "ui.view.timeline": "Timeline",
    "ui.view.memory": "Memory",
    "ui.view.communication": "Communication",
    "ui.view.ranks": "Ranks",
    "ui.view.compare": "Compare",
}, "zh": {
    "ui.profile": "Profile 数据",
    "ui.no_profiles": "当前没有提供任何 profile。请运行：profinsight serve PATH",
    "ui.ranks_steps": "{ranks} 个 rank，{steps} 个 step",
    "ui.loading": "正在加载 {id}",
    "ui.ranks_done": "已就绪 {done}/{total} 个 rank",
    "ui.stage.importing": "正在导入 profile 文件（首次打开；之后读取缓存）",
    "ui.stage.cached": "正在读取缓存",
    "ui.error": "无法显示",
    "ui.fix": "处理方法",
    "ui.diag.errors": "{n} 个错误",
    "ui.diag.warnings": "{n} 个警告",
    "ui.diag.infos": "{n} 条提示",
    "ui.view.overview": "总览",
    "ui.view.operators": "算子",
    "ui.view.timeline": "时间线",
    "ui.view.memory": "内存",
    "ui.view.communication": "通信",
    "ui.view.ranks": "多卡",
    "ui.view.compare": "对比",
}}
