"""Kernel categories: where device time goes, in the words a tuning engineer uses.

One classification shared by utilisation, comparison and the advisor, so that "format
conversion" means the same thing everywhere.  Rules are data (:data:`FORMAT_CONVERSION_TYPES`,
name patterns) so that users and later rules can extend them.
"""

from __future__ import annotations

import re

CATEGORIES = ("matmul", "convolution", "vector", "format_conversion", "ai_cpu", "communication", "memory", "other")

#: Ascend op types that only change a tensor's layout (NCHW <-> NC1HWC0 / FRACTAL_Z / ND ...)
FORMAT_CONVERSION_TYPES = frozenset(
    {
        "TransData",
        "TransDataRNN",
        "TransposeD",
        "Transpose",
        "FormatTransfer",
        "NPUFormatCast",
    }
)
#: types that are conversions only when input and output formats differ ("Cast-for-format")
MAYBE_FORMAT_TYPES = frozenset({"Cast", "Identity"})

_MATMUL = re.compile(r"(matmul|gemm|gemv|batchmatmul|^mm$|^bmm$|cublas|cutlass|sgemm|hgemm|xmma|linear)", re.I)
_CONV = re.compile(r"(conv|winograd|implicit_?gemm|cudnn.*(fprop|dgrad|wgrad))", re.I)
_CUBE_CORES = frozenset({"AI_CORE", "MIX_AIC"})
_VECTOR_CORES = frozenset({"AI_VECTOR_CORE", "MIX_AIV"})


def kernel_category(
    kind: str | None,
    type_: str | None,
    name: str | None,
    core: str | None,
    input_formats: str | None = None,
    output_formats: str | None = None,
) -> str:
    """Category of one device task (see :data:`CATEGORIES`)."""
    if kind == "communication" or kind == "comm_task":
        return "communication"
    if kind in ("memcpy", "memset"):
        return "memory"
    if kind != "kernel":
        return "other"
    t = (type_ or "").strip()
    if t in FORMAT_CONVERSION_TYPES or (t in MAYBE_FORMAT_TYPES and _formats_differ(input_formats, output_formats)):
        return "format_conversion"
    if core == "AI_CPU":
        return "ai_cpu"
    label = t if t and t != "N/A" else (name or "")
    if _CONV.search(label):
        return "convolution"
    if _MATMUL.search(label):
        return "matmul"
    if core in _VECTOR_CORES or core in _CUBE_CORES or core in ("GPU", None, "N/A", ""):
        return "vector"
    return "other"


def is_format_conversion(type_, input_formats=None, output_formats=None) -> bool:
    t = (type_ or "").strip()
    return t in FORMAT_CONVERSION_TYPES or (t in MAYBE_FORMAT_TYPES and _formats_differ(input_formats, output_formats))


def _formats_differ(inp: str | None, out: str | None) -> bool:
    if not inp or not out:
        return False
    a = {f for f in inp.split(";") if f}
    b = {f for f in out.split(";") if f}
    return bool(a and b and a != b)


def category_sql(alias: str = "") -> str:
    """The same rules as a DuckDB SQL CASE expression over device_tasks columns (vectorised);
    a test checks it agrees with :func:`kernel_category` on every fixture row."""
    a = f"{alias}." if alias else ""
    fc = ", ".join(f"'{t}'" for t in sorted(FORMAT_CONVERSION_TYPES))
    mf = ", ".join(f"'{t}'" for t in sorted(MAYBE_FORMAT_TYPES))
    label = f"coalesce(nullif(nullif(trim({a}type), ''), 'N/A'), {a}name, '')"
    differ = (
        f"(list_sort(list_distinct(list_filter(string_split(coalesce({a}input_formats, ''), ';'), lambda x: x <> '')))"
        f" <> list_sort(list_distinct(list_filter(string_split(coalesce({a}output_formats, ''), ';'), lambda x: x <> '')))"
        f" AND coalesce({a}input_formats, '') <> '' AND coalesce({a}output_formats, '') <> '')"
    )
    return f"""(CASE
      WHEN {a}kind IN ('communication', 'comm_task') THEN 'communication'
      WHEN {a}kind IN ('memcpy', 'memset') THEN 'memory'
      WHEN {a}kind <> 'kernel' OR {a}kind IS NULL THEN 'other'
      WHEN trim(coalesce({a}type, '')) IN ({fc}) THEN 'format_conversion'
      WHEN trim(coalesce({a}type, '')) IN ({mf}) AND {differ} THEN 'format_conversion'
      WHEN {a}core = 'AI_CPU' THEN 'ai_cpu'
      WHEN regexp_matches({label}, '{_CONV.pattern}', 'i') THEN 'convolution'
      WHEN regexp_matches({label}, '{_MATMUL.pattern}', 'i') THEN 'matmul'
      WHEN {a}core IS NULL OR {a}core IN ('AI_VECTOR_CORE', 'MIX_AIV', 'AI_CORE', 'MIX_AIC', 'GPU', 'N/A', '')
           THEN 'vector'
      ELSE 'other' END)"""
