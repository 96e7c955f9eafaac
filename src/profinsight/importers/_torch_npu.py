"""The folder layout of a torch_npu profile, shared by its two exports (text and DB).

A rank folder (``*_ascend_pt`` by habit; the name is never required) is recognised by what it
holds: ``ASCEND_PROFILER_OUTPUT/`` (the parsed deliverables), ``FRAMEWORK/`` or ``PROF_*``
children (the raw data before the offline parse), or a ``profiler_info*.json``.  Which export
it holds is each importer's own question; this module answers what both need: is this the
layout, at which profiler level was it collected, and what to tell a user when neither export
can read it.  A MindSpore profile (``*_ascend_ms``) shares the layout but is not torch_npu's.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import NotAProfile, ProfileError
from .base import Layout, Recognised

OUTPUT = "ASCEND_PROFILER_OUTPUT"
PROF_RE = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")


def is_rank_folder(p: Path) -> bool:
    """Whether ``p`` has the layout of a torch_npu rank folder (parsed or not); one listing."""
    if p.name.endswith("_ascend_ms"):
        return False
    prof_children = []
    try:
        with os.scandir(p) as it:
            for e in it:
                n = e.name
                if n in (OUTPUT, "FRAMEWORK") and e.is_dir():
                    return True
                if n.startswith("profiler_info") and n.endswith(".json"):
                    return True
                if PROF_RE.match(n):
                    prof_children.append(e.path)
    except OSError:
        return False
    # a PROF_* child alone is torch_npu's raw data only while it was never exported: an exported
    # CANN msprof collection (device_<n>/timeline) is a profile of its own, not an unparsed rank
    return any(not _exported_msprof(Path(c)) for c in prof_children)


def _exported_msprof(prof: Path) -> bool:
    """Whether a ``PROF_*`` folder holds what msprof exported: a ``device_<n>/timeline``, or
    current CANN's ``mindstudio_profiler_output/``."""
    try:
        with os.scandir(prof) as it:
            return any(
                (e.name.startswith("device_") and (Path(e.path) / "timeline").is_dir())
                or (e.name == "mindstudio_profiler_output" and e.is_dir())
                for e in it
            )
    except OSError:
        return False


LAYOUT = Layout("torch_npu rank folder", is_rank_folder)


def level(p: Path) -> str | None:
    """The profiler level recorded in the rank folder's ``profiler_info*.json``."""
    for info in sorted(p.glob("profiler_info*.json")):
        try:
            cfg = json.loads(info.read_text(encoding="utf-8", errors="replace"))
            return cfg.get("config", {}).get("experimental_config", {}).get("_profiler_level")
        except (OSError, ValueError, AttributeError):
            return None
    return None


def versions(info: dict) -> dict[str, str]:
    """Software versions a ``profiler_info*.json`` names: its top-level ``*_version`` keys as
    written (torch_npu 2.7 writes ``torch_npu_version`` and ``cann_version``; older releases
    write none), values as text.  Both exports put them in ``run_info.versions``."""
    if not isinstance(info, dict):
        return {}
    return {
        k: str(v)
        for k, v in sorted(info.items())
        if isinstance(k, str) and k.endswith("_version") and v not in (None, "") and not isinstance(v, (dict, list))
    }


def rank_id(info: dict) -> int | None:
    """``rank_id`` of a ``profiler_info*.json``: an int in older releases, a string (``"1"``) in
    torch_npu 2.7; None when absent or negative (a single card writes -1)."""
    rank = info.get("rank_id") if isinstance(info, dict) else None
    if isinstance(rank, str) and rank.strip().lstrip("-").isdigit():
        rank = int(rank.strip())
    return rank if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0 else None


#: the file torch_npu (2.5 and later) writes into ASCEND_PROFILER_OUTPUT when the offline parse finished
PARSE_DONE = "analyse.done"


def parse_finished(p: Path) -> bool | None:
    """True when the rank folder's ``ASCEND_PROFILER_OUTPUT/analyse.done`` says the offline parse
    finished; None when it is absent (older releases never write it, so absence proves nothing)."""
    return True if (Path(p) / OUTPUT / PARSE_DONE).is_file() else None


def unreadable(p: Path) -> ProfileError:
    """Why a folder of this layout holds no export that an importer can read."""
    if parse_finished(p):
        return NotAProfile(
            f"{p.name}: the offline parse finished ({OUTPUT}/{PARSE_DONE} is there) but {OUTPUT} holds none of its "
            "result files (they were deleted or not copied)",
            file=p,
            fix=f"copy the whole {OUTPUT} folder from the machine that recorded it, or re-run the offline parse "
            "(torch_npu.profiler.profiler.analyse)",
        )
    if (p / "FRAMEWORK").is_dir() or any(PROF_RE.match(c.name) for c in p.iterdir()):
        return NotAProfile(
            f"{p.name} holds raw profiler data that was never parsed (no ASCEND_PROFILER_OUTPUT)",
            file=p,
            fix='run the offline parse: python -c "from torch_npu.profiler.profiler import '
            f"analyse; analyse('{p}')\" (it writes ASCEND_PROFILER_OUTPUT)",
        )
    return NotAProfile(
        f"{p.name} looks like a torch_npu profile but ASCEND_PROFILER_OUTPUT has no readable "
        "files (was the collection interrupted?)",
        file=p,
        fix="re-run the offline parse (torch_npu.profiler.profiler.analyse) or collect again",
    )


# --- op type from a kernel name (Level0) ---------------------------------------------------
# Level0 records no op type (kernel_details.csv ``Type`` is ``N/A``, the DB's ``opType`` empty),
# but CANN names every kernel ``<API>_<kernel>_<OpType>[_<n>]`` (``aclnnMm_MatMulCommon_MatMulV2``,
# ``aclnnMaxPool2dWithMask_TransDataSpecial_TransData``) or ``trans_<OpType>_<n>``
# (``trans_TransData_0``, a layout conversion the framework inserted).  The last token before the
# optional counter is the type: on every fixture that records both (4560 kernels of the Level1 and
# Level2 exports) it equals the recorded ``Type``.  A name without ``_`` (``Conv2D1``) gets none.
#: the op type in a kernel name (after a trailing ``_<n>`` counter is removed), Python's re
TYPE_IN_NAME = r"_([A-Za-z][A-Za-z0-9]*)$"
COUNTER = r"_[0-9]+$"
#: DuckDB macro: the op type a kernel name says, or NULL
TYPE_FROM_NAME_MACRO = (
    "CREATE OR REPLACE MACRO type_from_name(n) AS "
    f"nullif(regexp_extract(regexp_replace(n, '{COUNTER}', ''), '{TYPE_IN_NAME}', 1), '')"
)


def type_from_name(names):
    """The op type each kernel name says (pyarrow array in, string array out; null where the
    name says none) -- the twin of :data:`TYPE_FROM_NAME_MACRO`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    base = pc.replace_substring_regex(names, COUNTER, "")
    found = pc.extract_regex(base, "_(?P<t>[A-Za-z][A-Za-z0-9]*)$")
    return pc.struct_field(found, [0]).cast(pa.string())


def inferred_type_note(n: int, file=None, rank=None):
    """The info diagnostic for ``n`` kernels whose type was read from their name."""
    from .. import diagnostics as dg

    return dg.info(
        "type-from-name",
        f"{n} kernel(s) record no op type (profiler Level0): their type was inferred from the kernel "
        "name (trans_TransData_0 -> TransData), so format conversions and the kernel categories see them.",
        file=file,
        fix="Collect with profiler_level=torch_npu.profiler.ProfilerLevel.Level1 to record op types, shapes and "
        "formats.",
        rank=rank,
    )


def recogniser(sniff, export: str):
    """The ``recognise`` of one torch_npu export (asked only of folders :data:`LAYOUT` claims):
    the rank source that ``sniff`` finds for ``export`` ("DB" / "text"), else why the folder
    cannot be read.  Both exports share it, so they say the same things about the same folder."""

    def recognise(path: Path) -> Recognised | None:
        src = sniff(path)
        if src is None:
            return Recognised(problem=unreadable(path))
        return Recognised(src, level=level(path))

    recognise.__doc__ = f"A torch_npu rank folder: its {export} export when it holds one, else why it cannot be read."
    return recognise
