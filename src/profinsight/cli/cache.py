"""Show what the cache of imported profiles holds, and prune or clear it.

With no option: the cache folder, its size against the limit (PROFINSIGHT_CACHE_MAX, default
20G), and its entries by kind with the oldest and newest use.  --prune removes the entries used
least recently until the cache fits the limit (--max-size to choose another), and with
--older-than DAYS every entry unused for that long; --clear removes every entry.  --dry-run says
what would go.  An entry used in the last hour is kept by the size rule.  The cache is rebuilt
on the next open of a profile; the experiment record is not in the cache and never touched."""

from __future__ import annotations

import time

from ..errors import ProfileError
from .common import add_output, dumps, emit, output_format
from .units import fmt_bytes

HELP = "show the cache of imported profiles; prune or clear it"
FORMATS = ["table", "json"]


def add_arguments(p) -> None:
    add_output(p, FORMATS)
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--prune", action="store_true", help="remove the entries used least recently until the cache fits"
    )
    what.add_argument("--clear", action="store_true", help="remove every entry")
    p.add_argument(
        "--max-size",
        metavar="SIZE",
        help="with --prune: the limit (e.g. 5G, 500M; default PROFINSIGHT_CACHE_MAX or 20G)",
    )
    p.add_argument(
        "--older-than", metavar="DAYS", type=float, help="with --prune: also remove entries unused for DAYS days"
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")


def _human(n: int) -> str:
    return fmt_bytes(n, gib_digits=1)


def _ago(t: float, now: float) -> str:
    s = max(0.0, now - t)
    if s < 3600:
        return f"{s / 60:.0f} min ago"
    if s < 86400 * 2:
        return f"{s / 3600:.1f} h ago"
    return f"{s / 86400:.0f} days ago"


def run(args) -> int:
    from ..store import prune
    from ..store.root import cache_root

    root = cache_root()
    if root is None:
        raise ProfileError(
            "the cache is switched off (PROFINSIGHT_CACHE=off)", fix="unset PROFINSIGHT_CACHE to use the cache"
        )
    try:
        limit = prune.parse_size(args.max_size) if args.max_size else prune.max_bytes_from_env()
    except ValueError as exc:
        raise ProfileError(str(exc), fix="--max-size 20G") from None
    if (args.max_size or args.older_than is not None) and not args.prune:
        raise ProfileError("--max-size and --older-than go with --prune", fix="profinsight cache --prune --max-size 5G")
    now = time.time()
    if args.clear:
        result = prune.clear(root, dry_run=args.dry_run)
    elif args.prune:
        older = args.older_than * 86400 if args.older_than is not None else None
        result = prune.prune(root, max_bytes=limit, older_than_s=older, dry_run=args.dry_run, now=now)
    else:
        result = prune.PruneResult(kept=prune.entries(root))
    acted = args.clear or args.prune
    data = {
        "folder": str(root),
        "limit_bytes": limit,
        "bytes": result.left,
        "entries": len(result.kept),
        "by_kind": _by_kind(result.kept),
        "dry_run": bool(args.dry_run),
        "removed": [{"path": str(e.path), "kind": e.kind, "bytes": e.bytes, "used": e.used} for e in result.removed]
        if acted
        else None,
        "freed_bytes": result.freed if acted else None,
    }
    if output_format(args, FORMATS) == "json":
        emit(dumps(data), args)
        return 0
    lines = [
        f"Cache: {root}",
        f"{_human(result.left)} in {len(result.kept)} entries; limit {_human(limit) if limit is not None else 'none'}"
        + (" (PROFINSIGHT_CACHE_MAX)" if not args.max_size else ""),
    ]
    for kind, k in data["by_kind"].items():
        lines.append(
            f"  {kind:<12} {k['entries']:>6} entries  {_human(k['bytes']):>10}  used {_ago(k['newest'], now)} .. {_ago(k['oldest'], now)}"
        )
    if acted:
        verb = "would remove" if args.dry_run else "removed"
        lines.append(f"{verb} {len(result.removed)} entries, {_human(result.freed)}")
    emit("\n".join(lines), args)
    return 0


def _by_kind(entries) -> dict:
    out: dict[str, dict] = {}
    for e in entries:
        k = out.setdefault(e.kind, {"entries": 0, "bytes": 0, "oldest": e.used, "newest": e.used})
        k["entries"] += 1
        k["bytes"] += e.bytes
        k["oldest"] = min(k["oldest"], e.used)
        k["newest"] = max(k["newest"], e.used)
    return out
