"""SQL macros for Kineto's free-form fields, so that every conversion runs vectorised in DuckDB.

Each macro turns one Kineto spelling into the canonical one:

* ``kineto_shapes(text)``: ``Input Dims`` ``[[2048], [], [[2, 3], [4]]]`` -> ``2048;;[2,3],[4]``
  (tensors joined by ``;``, dims by ``,``, only the outer brackets of each input removed).
* ``kineto_dtypes(text)``: ``Input type`` ``["float", ""]`` -> ``float;``.
* ``kernel_family(name)``: a short family name for a CUDA/HIP kernel, so kernels can be grouped
  without the template arguments (``void at::native::vectorized_elementwise_kernel<4, ...>(...)``
  -> ``vectorized_elementwise_kernel``; ``cutlass::Kernel<cutlass_80_tensorop_..>`` -> the
  template's kernel name).
* ``comm_type(x)``: a collective name in one spelling: lower case, no underscores, without
  the ``_base``/``_tensor``/``_single``/``_coalesced`` variants (``_all_gather_base`` ->
  ``allgather``, ``AllReduce`` -> ``allreduce``).
* ``dtype_bytes(t)``: element size of a PyTorch/NCCL dtype name (``Float`` -> 4).
* ``kineto_dims(text)``: a launch's ``grid`` / ``block`` ``[128, 1, 1]`` -> ``128,1,1``.
"""

from __future__ import annotations

#: element size of the dtype names PyTorch (``Float``, ``BFloat16``) and NCCL (``ncclFloat32``) use
DTYPE_BYTES = {
    16: ("complexdouble", "complex128"),
    8: (
        "double",
        "float64",
        "long",
        "int64",
        "uint64",
        "complexfloat",
        "complex64",
        "ncclint64",
        "nccluint64",
        "ncclfloat64",
        "nccldouble",
    ),
    4: (
        "float",
        "float32",
        "int",
        "int32",
        "uint32",
        "complexhalf",
        "ncclint32",
        "nccluint32",
        "ncclfloat32",
        "ncclfloat",
        "ncclint",
    ),
    2: ("half", "float16", "bfloat16", "short", "int16", "uint16", "ncclfloat16", "ncclhalf", "ncclbfloat16"),
    1: ("byte", "char", "bool", "int8", "uint8", "ncclint8", "nccluint8", "ncclchar"),
}


def _dtype_macro() -> str:
    cases = "\n".join(
        f"          WHEN lower(t) IN ({', '.join(repr(n) for n in names)}) THEN {size}"
        for size, names in DTYPE_BYTES.items()
    )
    return (
        "CREATE OR REPLACE MACRO dtype_bytes(t) AS (CASE\n"
        + cases
        + "\n          WHEN starts_with(lower(t), 'float8') THEN 1 ELSE NULL END)"
    )


MACROS = [
    # fast path on the minified text DuckDB hands over ([[2048],[]] -> 2048;), JSON path for
    # nested (tensor list) inputs
    r"""CREATE OR REPLACE MACRO kineto_shapes(x) AS (CASE
          WHEN x IS NULL OR NOT starts_with(x, '[') THEN NULL
          WHEN x = '[]' THEN ''
          WHEN regexp_full_match(x, '\[\[[0-9,-]*\](,\[[0-9,-]*\])*\]')
            THEN replace(substr(x, 3, length(x) - 4), '],[', ';')
          ELSE array_to_string(list_transform(TRY_CAST(TRY_CAST(x AS JSON) AS JSON[]),
            lambda e: regexp_replace(regexp_replace(CAST(e AS VARCHAR), '\s', '', 'g'),
                                     '^\[(.*)\]$', '\1')), ';')
        END)""",
    r"""CREATE OR REPLACE MACRO kineto_dtypes(x) AS (CASE
          WHEN x IS NULL OR NOT starts_with(x, '[') THEN NULL
          WHEN x = '[]' THEN ''
          WHEN regexp_full_match(x, '\["[^"\\]*"(,"[^"\\]*")*\]')
            THEN replace(substr(x, 3, length(x) - 4), '","', ';')
          ELSE array_to_string(list_transform(TRY_CAST(TRY_CAST(x AS JSON) AS JSON[]),
            lambda e: coalesce(json_extract_string(e, '$'), '')), ';')
        END)""",
    r"""CREATE OR REPLACE MACRO kernel_base(n) AS
        regexp_extract(replace(regexp_replace(n, '^\s*void\s+', ''), '(anonymous namespace)::', ''),
                       '^([^<(]*)', 1)""",
    r"""CREATE OR REPLACE MACRO kernel_family(n) AS (CASE
          WHEN regexp_extract(trim(kernel_base(n)), '([A-Za-z0-9_$]+)$', 1) IN ('Kernel', 'Kernel2', 'kernel')
               AND regexp_matches(n, '<\s*[A-Za-z_]')
            THEN regexp_extract(n, '<\s*(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Za-z_][A-Za-z0-9_]*)', 1)
          ELSE nullif(regexp_extract(trim(kernel_base(n)), '([A-Za-z0-9_$.]+)$', 1), '')
        END)""",
    r"""CREATE OR REPLACE MACRO comm_type(x) AS
        nullif(regexp_replace(replace(lower(trim(x)), '_', ''),
                              '(intotensor|tensor|base|single|coalesced)$', ''), '')""",
    r"""CREATE OR REPLACE MACRO nccl_kernel_type(n) AS
        comm_type(regexp_extract(n, '(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)', 1))""",
    r"""CREATE OR REPLACE MACRO kineto_dims(x) AS regexp_replace(x, '[\[\]\s]', '', 'g')""",
    r"""CREATE OR REPLACE MACRO comm_category(t) AS
        CASE WHEN t IN ('send', 'recv', 'sendrecv', 'p2p') THEN 'p2p' ELSE 'collective' END""",
    _dtype_macro(),
]


def install(con) -> None:
    for m in MACROS:
        con.execute(m)
