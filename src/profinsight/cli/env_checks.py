"""``profinsight doctor --env``, the parts beyond profinsight's own libraries: is the JupyterLab
extension installed and enabled, with the same version as the Python package; which torch,
torch_npu and CANN are here and whether they fit together; which environment variables change
what a profile records.

Nothing heavy is imported: versions come from package metadata and files (importing torch_npu
initialises the NPU runtime and takes seconds), and the Jupyter checks read the same config
files and folders that ``jupyter server extension list`` and ``jupyter labextension list`` read.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .. import diagnostics as dg

SERVER_EXTENSION = "profinsight.jupyter"
LABEXTENSION = "profinsight"

#: environment variables that change what a profile records or how fast the run goes
PROFILING_ENV = {
    "ASCEND_LAUNCH_BLOCKING": "operators launch synchronously: host and device serialise, the timeline "
    "shows no overlap and steps are slower than in production",
    "CUDA_LAUNCH_BLOCKING": "kernels launch synchronously: host and device serialise, the timeline shows no "
    "overlap and steps are slower than in production",
    "ASCEND_GLOBAL_LOG_LEVEL": "CANN log level (0 debug, 1 info): debug/info logging adds host time to every op",
    "ASCEND_SLOG_PRINT_TO_STDOUT": "CANN logs printed to stdout: adds host time",
    "ASCEND_RT_VISIBLE_DEVICES": "which NPUs the process sees (device ids in the profile are renumbered)",
    "CUDA_VISIBLE_DEVICES": "which GPUs the process sees (device ids in the profile are renumbered)",
    "ASCEND_HOME_PATH": "the CANN installation in use",
    "ASCEND_TOOLKIT_HOME": "the CANN toolkit in use",
    "ASCEND_OPP_PATH": "the CANN operator package in use",
    "HCCL_CONNECT_TIMEOUT": "HCCL connection timeout (collective start-up)",
    "HCCL_EXEC_TIMEOUT": "HCCL execution timeout (a hung collective waits this long)",
    "HCCL_BUFFSIZE": "HCCL buffer size in MB: changes how collectives are split",
    "TASK_QUEUE_ENABLE": "torch_npu task queue (0 disables the launch queue: host-bound steps)",
    "PYTORCH_NPU_ALLOC_CONF": "NPU caching allocator settings: changes the memory curves",
    "PYTORCH_CUDA_ALLOC_CONF": "CUDA caching allocator settings: changes the memory curves",
    "ASCEND_GLOBAL_EVENT_ENABLE": "CANN event logging: on, it records every event and slows the job",
    "KINETO_LOG_LEVEL": "Kineto's log level",
    "PROFINSIGHT_CACHE": "where profinsight caches imported profiles ('off' disables the cache)",
}


def environment_extra_checks() -> list[dg.Diagnostic]:
    return scanner_checks() + jupyter_checks() + mcp_checks() + framework_checks() + env_var_checks()


def scanner_checks() -> list[dg.Diagnostic]:
    """Whether the compiled trace scanner (``importers/chrome_trace/_scan.c``) was built at install,
    looked up as a file (its loader imports NumPy and pyarrow; this check stays at start-up speed)."""
    import importlib.util
    import os
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "importers" / "chrome_trace"
    spec = importlib.util.spec_from_file_location("_profinsight_native_build", folder / "_native_build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)  # standard library only
    lib = folder / build.LIB_NAME
    if not lib.is_file():
        return [
            dg.info(
                "trace-scanner-absent",
                "the trace scanner was not compiled at install (no C compiler): DuckDB reads every Chrome-trace "
                "JSON, the same tables, slower",
                fix="install a C compiler (gcc or clang), then reinstall profinsight",
            )
        ]
    if _built_from(lib) != build.source_hash(folder / "_scan.c"):
        return [
            dg.info(
                "trace-scanner-stale",
                "the trace scanner was built from another version of its source (_scan.c changed since it was "
                "compiled): it is not used, DuckDB reads every Chrome-trace JSON",
                file=lib,
                fix=f"python {folder / '_native_build.py'}  (or reinstall profinsight)",
            )
        ]
    if os.environ.get("PROFINSIGHT_NATIVE", "1") == "0":
        return [dg.info("trace-scanner-off", "PROFINSIGHT_NATIVE=0: DuckDB reads every Chrome-trace JSON", file=lib)]
    return [dg.info("trace-scanner", "the compiled trace scanner reads Chrome-trace JSON", file=lib)]


def _built_from(lib) -> str | None:
    """The source hash compiled into the scanner library ``lib`` (ctypes: no NumPy, no pyarrow)."""
    import ctypes

    try:
        handle = ctypes.CDLL(str(lib))
        handle.pi_source_hash.restype = ctypes.c_char_p
        return handle.pi_source_hash().decode()
    except (OSError, AttributeError, UnicodeDecodeError):
        return None


def mcp_checks() -> list[dg.Diagnostic]:
    """Whether ``profinsight mcp`` can start: the MCP SDK (2.x) is installed (not imported)."""
    v = _version("mcp")
    if v is None:
        return [
            dg.info(
                "mcp-absent",
                "the MCP SDK is not installed: `profinsight mcp` (tools for coding agents) cannot start",
                fix="pip install 'profinsight[mcp]'",
            )
        ]
    if not v.startswith("2."):
        return [
            dg.warning(
                "mcp-version", f"mcp {v} is installed; profinsight mcp needs 2.x", fix="pip install 'mcp>=2.3,<3'"
            )
        ]
    return [dg.info("mcp", f"mcp {v}: `profinsight mcp` can serve coding agents")]


def _version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, or None."""
    meta = dist_metadata(dist)
    return None if meta is None else meta.get("Version")


_listings: dict[str, list[str]] = {}


def dist_metadata(dist: str) -> dict | None:
    """The headers of distribution ``dist``'s installed metadata (``Version``, ``Requires-Dist``
    as a list), found as ``importlib.metadata`` finds it — the first ``<name>-<version>.dist-info``
    (or ``.egg-info``) on ``sys.path`` — but read directly: ``importlib.metadata`` imports Python's
    e-mail package to parse the same lines, a tenth of a second that ``doctor --env`` cannot spare."""
    import sys

    want = re.sub(r"[-_.]+", "_", dist).lower()
    for entry in sys.path:
        folder = entry or "."
        if folder not in _listings:
            try:
                _listings[folder] = os.listdir(folder)
            except OSError:
                _listings[folder] = []
        for name in _listings[folder]:
            stem, dot, suffix = name.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or not dot:
                continue
            if re.sub(r"[-_.]+", "_", stem.split("-", 1)[0]).lower() != want:
                continue
            path = Path(folder) / name
            meta = path / ("METADATA" if suffix == "dist-info" else "PKG-INFO") if path.is_dir() else path
            try:
                return _headers(meta.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
    return None


def _headers(text: str) -> dict:
    out: dict = {"Requires-Dist": []}
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first empty line; the description follows
        key, sep, value = line.partition(":")
        if not sep or line[:1].isspace():
            continue
        if key == "Requires-Dist":
            out[key].append(value.strip())
        else:
            out.setdefault(key, value.strip())
    return out


# --- JupyterLab -----------------------------------------------------------------------------
def jupyter_checks() -> list[dg.Diagnostic]:
    from .._version import __version__

    out = []
    server, lab = _version("jupyter_server"), _version("jupyterlab")
    if server is None:
        out.append(
            dg.info(
                "jupyter-absent",
                "jupyter_server is not installed: the JupyterLab extension is unused",
                fix="pip install jupyterlab (profinsight's extension is in this wheel already)",
            )
        )
        return out
    out.append(dg.info("jupyter", f"jupyter_server {server}" + (f", JupyterLab {lab}" if lab else ", no JupyterLab")))
    try:
        enabled = _server_extensions()
    except Exception as exc:  # noqa: BLE001 - a broken Jupyter install is a finding, not a crash
        enabled = None
        out.append(
            dg.warning(
                "server-extension-unknown",
                f"cannot read Jupyter's server config: {exc}",
                fix="run: jupyter server extension list",
            )
        )
    if enabled is not None:
        if enabled.get(SERVER_EXTENSION):
            out.append(dg.info("server-extension", f"server extension {SERVER_EXTENSION} is enabled"))
        else:
            state = "disabled" if SERVER_EXTENSION in enabled else "not enabled"
            out.append(
                dg.warning(
                    "server-extension-disabled",
                    f"server extension {SERVER_EXTENSION} is {state}: the sidebar and the viewer tab get no data",
                    fix=f"jupyter server extension enable {SERVER_EXTENSION} (a pip install of "
                    "the wheel enables it; an editable install may not)",
                )
            )
    if lab is None:
        return out
    if _lab_too_old(lab):
        out.append(
            dg.warning(
                "jupyterlab-too-old",
                f"JupyterLab {lab}: the profinsight extension is built for 4.6 "
                "and JupyterLab lists it as not compatible",
                fix="pip install 'jupyterlab>=4.6'",
            )
        )
    found = _labextension_dirs()
    if not found:
        out.append(
            dg.warning(
                "labextension-missing",
                "the profinsight JupyterLab extension is not installed: JupyterLab shows no Profiles sidebar",
                fix="reinstall with pip install profinsight (the wheel ships it); from a checkout: "
                "jlpm build && jupyter labextension develop --overwrite .",
            )
        )
        return out
    where, pkg = found[0]
    ext_version = pkg.get("version")
    out.append(dg.info("labextension", f"JupyterLab extension {LABEXTENSION} {ext_version} is installed", file=where))
    if ext_version and ext_version != __version__:
        out.append(
            dg.warning(
                "labextension-version",
                f"the JupyterLab extension is {ext_version} but the Python "
                f"package is {__version__}: the viewer and the server may not agree",
                file=where,
                fix="pip install --force-reinstall profinsight; then restart Jupyter",
            )
        )
    if len(found) > 1:
        others = ", ".join(str(w) for w, _ in found[1:])
        out.append(dg.info("labextension-shadowed", f"other copies of the extension are ignored: {others}"))
    if _lab_disabled():
        out.append(
            dg.warning(
                "labextension-disabled",
                "the profinsight JupyterLab extension is disabled",
                fix=f"jupyter labextension enable {LABEXTENSION}",
            )
        )
    return out


def _server_extensions() -> dict:
    """``ServerApp.jpserver_extensions`` as the server reads it: in each config folder the
    ``jupyter_server_config.d/*.json`` files (sorted), then ``jupyter_server_config.json``,
    merged folder by folder in ``jupyter_config_path()`` order, a later folder's value winning
    (the merge ``ExtensionConfigManager(read_config_path=jupyter_config_path()[::-1])`` makes);
    a ``null`` removes a key.  Read here
    rather than through jupyter_server's ``ExtensionConfigManager``, whose import (traitlets,
    the server's services) costs more than the whole ``doctor --env``."""
    from jupyter_core.paths import jupyter_config_path

    config: dict = {}
    for folder in jupyter_config_path():
        d = Path(folder)
        for f in [*sorted((d / "jupyter_server_config.d").glob("*.json")), d / "jupyter_server_config.json"]:
            try:
                if not f.is_file() or not f.stat().st_size:
                    continue
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # the server skips a file of invalid JSON too
            if isinstance(data, dict):
                _merge(config, data)
    extensions = config.get("ServerApp", {}).get("jpserver_extensions", {})
    return extensions if isinstance(extensions, dict) else {}


def _merge(target: dict, new: dict) -> None:
    """jupyter_server's ``recursive_update``: nested dicts merge, ``None`` deletes a key."""
    for k, v in new.items():
        if isinstance(v, dict):
            sub = target.setdefault(k, {})
            if isinstance(sub, dict):
                _merge(sub, v)
                if not sub:
                    del target[k]
            else:
                target[k] = v
        elif v is None:
            target.pop(k, None)
        else:
            target[k] = v


def _lab_too_old(v: str) -> bool:
    m = re.match(r"(\d+)\.(\d+)", v)
    return bool(m) and (int(m.group(1)), int(m.group(2))) < (4, 6)


def _labextension_dirs() -> list[tuple[Path, dict]]:
    """Installed copies of the labextension, in JupyterLab's lookup order."""
    try:
        from jupyter_core.paths import jupyter_path

        dirs = jupyter_path("labextensions")
    except Exception:  # noqa: BLE001
        return []
    out = []
    for d in dirs:
        pkg = Path(d) / LABEXTENSION / "package.json"
        try:
            out.append((pkg.parent, json.loads(pkg.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    return out


def _lab_disabled() -> bool:
    try:
        from jupyter_core.paths import jupyter_config_path
    except ImportError:
        return False
    for d in jupyter_config_path():
        folder = Path(d) / "labconfig"
        for f in [folder / "page_config.json", *sorted((folder / "page_config.d").glob("*.json"))]:
            try:
                cfg = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            disabled = cfg.get("disabledExtensions") or {}
            names = disabled if isinstance(disabled, list) else [k for k, v in disabled.items() if v]
            if any(n == LABEXTENSION or str(n).startswith(LABEXTENSION + ":") for n in names):
                return True
    return False


# --- torch / torch_npu / CANN ------------------------------------------------------------------
def framework_checks() -> list[dg.Diagnostic]:
    out = []
    torch, npu = _version("torch"), _version("torch_npu") or _version("torch-npu")
    out.append(
        dg.info(
            "torch",
            f"torch {torch}"
            if torch
            else "torch is not installed here (reading profiles does not need it; collecting does)",
        )
    )
    if npu:
        out.append(dg.info("torch-npu", f"torch_npu {npu}"))
        if torch and _major_minor(torch) != _major_minor(npu):
            out.append(
                dg.warning(
                    "torch-npu-mismatch",
                    f"torch {torch} and torch_npu {npu} are from different releases",
                    fix="install the torch_npu release made for this torch version",
                )
            )
    cann_home, cann_version = _cann()
    if cann_home:
        out.append(dg.info("cann", f"CANN {cann_version or '(version unknown)'} at {cann_home}", file=cann_home))
    elif npu:
        out.append(
            dg.warning(
                "cann-missing",
                "torch_npu is installed but no CANN toolkit was found",
                fix="source /usr/local/Ascend/ascend-toolkit/set_env.sh (sets ASCEND_HOME_PATH)",
            )
        )
    else:
        out.append(dg.info("cann-absent", "no Ascend CANN toolkit here (needed only to collect NPU profiles)"))
    return out


def _major_minor(v: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\d+", v)[:2])


def _cann() -> tuple[str | None, str | None]:
    candidates = [os.environ.get(k) for k in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")]
    candidates += ["/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/latest"]
    for c in candidates:
        if not c or not Path(c).is_dir():
            continue
        home = Path(c)
        for info in [
            home / "version.cfg",
            *sorted(home.glob("*/ascend_toolkit_install.info")),
            *sorted(home.glob("*/version.info")),
        ]:
            try:
                text = info.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            m = re.search(r"(?:^|\n)\s*(?:version|Version)\s*=\s*\[?([^\]\n]+)", text)
            if m:
                return str(home), m.group(1).strip()
        return str(home), None
    return None, None


# --- environment variables ---------------------------------------------------------------------
def env_var_checks() -> list[dg.Diagnostic]:
    out = []
    for name, what in PROFILING_ENV.items():
        value = os.environ.get(name)
        if value is None:
            continue
        if name.endswith("LAUNCH_BLOCKING") and value.strip() not in ("", "0"):
            out.append(
                dg.warning(
                    "launch-blocking",
                    f"{name}={value}: {what}",
                    fix=f"unset {name} while profiling (use it only to locate an error)",
                )
            )
        elif name == "ASCEND_GLOBAL_LOG_LEVEL" and value.strip() in ("0", "1"):
            out.append(
                dg.warning(
                    "verbose-logging", f"{name}={value}: {what}", fix=f"export {name}=3 (errors only) while profiling"
                )
            )
        elif name == "ASCEND_GLOBAL_EVENT_ENABLE" and value.strip() not in ("", "0"):
            out.append(_global_event(value.strip()))
        elif name == "TASK_QUEUE_ENABLE" and value.strip() == "0":
            out.append(
                dg.warning(
                    "task-queue-off",
                    f"{name}=0: {PROFILING_ENV[name]}",
                    fix=f"unset {name} (or set it to 1 or 2) while profiling",
                )
            )
        else:
            out.append(dg.info("env", f"{name}={value}: {what}"))
    return out


def _global_event(value: str) -> dg.Diagnostic:
    from ..i18n import t

    key = "diag.global-event-enabled"
    return dg.warning("global-event-enabled", t(key, "en", value=value), fix=t(key + ".fix", "en", value=value))
