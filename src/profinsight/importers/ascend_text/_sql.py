"""SQL macros of this importer, on top of :data:`.._common.MACROS`.

``norm_list`` / ``norm_stack`` are the SQL twins of :func:`.._text.normalise_list` and
:func:`.._text.normalise_stack`, the one definition of the canonical text forms that the DB
importer uses too; ``tests/importers/test_ascend_text.py`` checks that they agree on every
string of the fixtures and on random strings.  Both are exact, not approximations:

- ``norm_list``: quotes removed, ``;`` + line break -> ``;``, other line breaks -> ``;``,
  whitespace trimmed; empty / ``N/A`` -> null.  Both rewrites need a line feed, so a value
  without one (every shape and dtype list the profiler writes) skips them: the same result, and
  the two ``regexp_replace`` of each cell of six kernel_details.csv columns are not run.
- ``norm_stack``: frames split at ``;`` + line break, trimmed, one trailing ``;`` dropped, empty
  frames dropped, joined by ``\\n``.  The general form needs a list lambda (slow on long stacks),
  so strings without any irregularity (the profiler's own output) take a plain ``replace`` that
  gives the same result; a regexp guard sends everything else down the general path.
- ``trace_ts_ns``: the trace writes ``ts`` with exactly three decimals; for that form dropping
  the dot gives ns directly, any other form uses ``ts_ns``.  The form is told by ``LIKE '%.___'``
  (a dot, then three characters), not by slicing ``x[-4:-4]``: the same test, 88 -> 66 ms on
  456 k times.  The cast is written once, inside ``coalesce`` (which computes ``ts_ns`` only for
  the rows the fast form left NULL): written in the test and again as the result, DuckDB cast
  every time twice (86 -> 51 ms on the 451 k times of the 100 MB scaled trace).
"""

from __future__ import annotations

_WS = "' ' || chr(9) || chr(10) || chr(13) || chr(11) || chr(12)"

MACROS = [
    f"""CREATE OR REPLACE MACRO norm_list(x) AS CASE
          WHEN trim(replace(x, '"', ''), {_WS}) IN ('', 'N/A') THEN NULL
          WHEN NOT contains(x, chr(10)) THEN trim(replace(x, '"', ''), {_WS})
          ELSE trim(regexp_replace(regexp_replace(replace(x, '"', ''), ';[ \\t]*\\r?\\n', ';', 'g'),
                                   '\\r?\\n', ';', 'g'), {_WS}) END""",
    f"""CREATE OR REPLACE MACRO norm_stack_general(x) AS nullif(array_to_string(list_filter(list_transform(
          regexp_split_to_array(x, ';[ \\t]*\\r?\\n'),
          lambda f: CASE WHEN ends_with(trim(f, {_WS}), ';') THEN left(trim(f, {_WS}), length(trim(f, {_WS})) - 1)
                         ELSE trim(f, {_WS}) END),
          lambda f: f <> ''), chr(10)), '')""",
    """CREATE OR REPLACE MACRO norm_stack(x) AS CASE
          WHEN regexp_matches(x, '\\s;|;[ \\t]|;;|;\\s*$|^\\s|\\s$|\\n\\s|^;|\\n;') THEN norm_stack_general(x)
          ELSE nullif(replace(replace(x, ';' || chr(13) || chr(10), chr(10)), ';' || chr(10), chr(10)), '') END""",
    """CREATE OR REPLACE MACRO trace_ts_ns(x) AS
          coalesce(CASE WHEN x LIKE '%.___' THEN TRY_CAST(replace(x, '.', '') AS BIGINT) END, ts_ns(x))""",
]


def install(con) -> None:
    for m in MACROS:
        con.execute(m)
