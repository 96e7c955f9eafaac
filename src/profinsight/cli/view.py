"""Run one analysis and print its table: ``profinsight view NAME PATH... [--param value ...]``.
The analysis' parameters become options (``--by type``, ``--top 20``)."""

from __future__ import annotations

from ..errors import ProfileError
from .common import add_paths, dumps, emit, load_profile, make_console, output_format

HELP = "run one analysis (op_summary, step_breakdown, ...) and print its table"
FORMATS = ["table", "json", "csv", "html", "md"]


def add_arguments(p) -> None:
    p.add_argument("analysis", metavar="ANALYSIS", nargs="?", help="analysis name (profinsight view --list lists them)")
    p.add_argument("--list", action="store_true", help="list every registered analysis with its parameters and exit")
    add_paths(p)
    p.add_argument("--format", choices=FORMATS, help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")
    p.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="analysis parameter, e.g. -p by=type -p top=20 (also --NAME VALUE)",
    )


def run(args) -> int:
    from ..registry import all_analyses, get

    if args.list or args.analysis in ("list", "--list"):
        for name, a in sorted(all_analyses().items()):
            print(f"{name:20} {a.title}")
            if args.list:  # the long form: parameters too, as the registry declares them
                for prm in a.params:
                    choices = f" {{{', '.join(map(str, prm.choices))}}}" if prm.choices else ""
                    print(
                        f"{'':22}--{prm.name.replace('_', '-')} {prm.type.__name__}{choices} (default {prm.default!r})"
                    )
        return 0
    if args.analysis is None:
        raise ProfileError(
            "no analysis named", fix="profinsight view --list shows them; then: profinsight view NAME PATH"
        )
    a = get(args.analysis)
    params = _params(a, args)
    prof = load_profile(args)
    df = a.run(prof, **params)
    fmt = output_format(args, FORMATS)
    import pandas as pd

    plain = pd.DataFrame(df)
    if fmt == "json":
        emit(dumps({"analysis": a.name, "params": params, "rows": plain.to_dict(orient="records")}), args)
    elif fmt == "csv":
        emit(plain.to_csv(index=False), args)
    elif fmt == "html":
        from ..render.notebook import render_html

        emit(f"<!doctype html><meta charset='utf-8'><title>{a.title}</title>" + render_html(plain, a, params), args)
    elif fmt == "md":
        emit(_markdown(plain), args)
    else:
        _table(plain, a, args)
    return 0


def _params(a, args) -> dict:
    out = {}
    known = {p.name for p in a.params}
    items = list(args.param) + list(getattr(args, "extra", []) or [])
    for item in items:
        if "=" not in item:
            raise ProfileError(f"parameter {item!r} must be NAME=VALUE", fix=f"parameters: {', '.join(known)}")
        k, v = item.split("=", 1)
        out[k.strip().replace("-", "_")] = None if v.lower() in ("none", "null", "") else v
    return out


def _markdown(df) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_fmt(v) for v in r) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    import pandas as pd

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if isinstance(v, float):
        return f"{v:,.3f}"
    return str(v).replace("|", "/").replace("\n", " ")


def _table(df, a, args) -> None:
    from rich.table import Table

    console = make_console(args, 160)
    t = Table(title=a.title, box=None, header_style="bold")
    for c in df.columns:
        t.add_column(
            str(c),
            justify="right"
            if df[c].dtype.kind in "iuf" or str(df[c].dtype) in ("Int64", "Float64", "Int32")
            else "left",
            overflow="fold",
        )
    for _, r in df.head(200).iterrows():
        t.add_row(*(_fmt(v) for v in r))
    console.print(t)
    if len(df) > 200:
        console.print(f"[dim]{len(df) - 200:,} more rows (use --format csv)[/dim]")
    if args.output:
        emit(console.export_text(), args)
