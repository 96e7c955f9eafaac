"""Write the canonical tables out: Parquet (one file per table, in a folder) or CSV, for any
tool that reads them (DuckDB, pandas, Spark)."""

from __future__ import annotations

from pathlib import Path

from ..errors import ProfileError
from .common import add_paths, load_profile

HELP = "write the canonical tables as Parquet or CSV files"
FORMATS = ["parquet", "csv"]


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--format", choices=FORMATS, default="parquet", help="file format (default parquet)")
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="folder to write one file per table into")
    p.add_argument("--tables", help="comma-separated table names (default: all)")


def run(args) -> int:
    from ..schema import TABLES

    names = list(TABLES) if not args.tables else [t.strip() for t in args.tables.split(",") if t.strip()]
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        raise ProfileError(f"unknown table(s): {', '.join(unknown)}", fix=f"tables: {', '.join(TABLES)}")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise ProfileError(f"{out} exists and is not a folder", fix="give a folder for -o")
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    prof = load_profile(args)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in names:
            table = prof.arrow(name)
            if args.format == "parquet":
                pq.write_table(table, out / f"{name}.parquet", compression="zstd")
            else:
                pacsv.write_csv(table, out / f"{name}.csv")
    except OSError as exc:
        raise ProfileError(f"cannot write to {out}: {exc.strerror}", file=out, fix="choose a writable folder") from None
    print(f"wrote {len(names)} tables ({args.format}) to {out}")
    return 0
