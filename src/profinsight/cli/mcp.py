"""Serve the engine to a coding agent over MCP (stdio): every registered analysis as a tool,
plus discover, load, doctor, advise, compare, ranks, timeline_window, search_slices, read-only
sql and viewer_link; the glossary and each view's doc as resources; a triage prompt.  Only
profiles under the --root folders (default: the working directory) are readable.  Register it
with an MCP client as the command `profinsight mcp --root FOLDER` (docs/agents.md)."""

from __future__ import annotations

HELP = "serve the analyses to a coding agent over MCP (stdio)"


def add_arguments(p) -> None:
    p.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="FOLDER",
        help="a folder whose profiles may be read (repeatable; default: the working directory)",
    )
    p.add_argument(
        "--sample",
        action="store_true",
        help="serve the bundled real sample (its folder as a root; with no --root, the only one)",
    )
    p.add_argument("--prefer", choices=["db", "text"], help="export to read when a folder has both")
    p.add_argument("--viewer-url", metavar="URL", help="the URL `profinsight serve` printed, for viewer_link")
    p.add_argument("--jupyter-url", metavar="URL", help="a JupyterLab URL (with its token), for viewer_link")
    p.add_argument("--jupyter-root", metavar="FOLDER", help="JupyterLab's root folder (default: the first --root)")
    p.add_argument("--lang", choices=["en", "zh"], help="language of findings (default: from the locale)")


def run(args) -> int:
    from ..agents import make_session
    from ..samples import sample_path

    roots = list(args.root)
    if args.sample:
        roots.append(str(sample_path().parent))
    session = make_session(
        roots or ["."],
        prefer=args.prefer,
        viewer_url=args.viewer_url,
        jupyter_url=args.jupyter_url,
        jupyter_root=args.jupyter_root,
        lang=args.lang,
    )
    from ..agents.server import serve_stdio

    serve_stdio(session)
    return 0
