"""The MCP server: the tool catalogue, resources and the triage prompt on the official SDK's
``MCPServer``, over stdio only.

The SDK is imported here, when the server is built (it costs about a second: ``profinsight
--help`` and every other command never pay for it).  Each :class:`~profinsight.agents.tools.Tool`
becomes an SDK tool through a function whose signature is built from the tool's arguments, so
the SDK derives the JSON schema (names, types, defaults, allowed values, help) from the same
declarations the registry holds.  Engine calls run on one worker thread, one at a time (the
profiles' DuckDB connections are never used by two threads at once); every failure reaches the
agent as a tool error with the message and the fix, never a traceback.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Literal

import orjson

from .._version import __version__
from ..errors import ProfileError
from .resources import TRIAGE, analysis_page, doc_pages, glossary
from .session import Session
from .tools import Tool, catalogue

ENGINE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="profinsight-mcp")

INSTRUCTIONS = (
    "profinsight reads Ascend NPU and GPU profiles (torch_npu exports, msprof, Kineto). Start with "
    "`load(path)` (or `discover` to list runs), keep its profile_id, then call the analyses "
    "(op_summary, step_breakdown, idle_gaps, utilization, ...) and `advise` for findings with "
    "evidence and recoverable time. Times in tables are integer ns, in analyses float us. The "
    "`triage` prompt walks the user's guide order."
)


def encode(data) -> str:
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY, default=str).decode()


def error_text(exc: BaseException) -> str:
    """A failure as the agent reads it: the message and the fix, no traceback."""
    if isinstance(exc, ProfileError):
        message = str(exc).split("\nFix:")[0]
        return message + (f"\nFix: {exc.fix}" if exc.fix else "")
    return f"internal error: {type(exc).__name__}: {exc}\nFix: report it with the call that failed"


def _annotation(arg) -> Any:
    from pydantic import Field

    base = {int: int, float: float, str: str, bool: bool, dict: dict[str, Any], list: list[str]}.get(arg.type, str)
    if arg.choices:
        base = Literal[tuple(arg.choices)]
    if not arg.required and arg.default is None:
        base = base | None
    return Annotated[base, Field(description=arg.help or arg.name)]


def sdk_function(tool: Tool, session: Session):
    """An async function the SDK can register for ``tool``: its signature is the tool's arguments."""
    from mcp.server.mcpserver.exceptions import ToolError

    async def run(**arguments) -> str:
        loop = asyncio.get_running_loop()
        try:
            data = await loop.run_in_executor(ENGINE, functools.partial(tool.call, session, **arguments))
        except Exception as exc:  # noqa: BLE001 - every failure is a tool error, never a traceback
            raise ToolError(error_text(exc)) from None
        return encode(data)

    params = [
        inspect.Parameter(
            a.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=_annotation(a),
            **({} if a.required else {"default": a.default}),
        )
        for a in tool.args
    ]
    run.__signature__ = inspect.Signature(params, return_annotation=str)
    run.__name__ = tool.name
    run.__doc__ = tool.description
    return run


def build(session: Session):
    """The ``MCPServer`` for ``session``: every tool of the catalogue, the resources, the prompt."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise ProfileError(
            "profinsight mcp needs the MCP SDK (the Python package `mcp` 2.x), which is not installed",
            fix="pip install 'profinsight[mcp]'",
        ) from None
    from mcp.server.mcpserver.resources import FunctionResource
    from mcp_types import ToolAnnotations

    server = MCPServer("profinsight", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    for tool in catalogue():
        server.add_tool(
            sdk_function(tool, session),
            name=tool.name,
            title=tool.title,
            description=tool.description,
            annotations=read_only,
            structured_output=False,
        )
    _add_resources(server, FunctionResource)
    _add_prompt(server)
    return server


def _add_resources(server, FunctionResource) -> None:
    def add(uri, name, description, fn):
        server.add_resource(
            FunctionResource(uri=uri, name=name, description=description, mime_type="text/markdown", fn=fn)
        )

    add("profinsight://glossary", "glossary", "Units, the words of the analyses, every canonical table", glossary)
    from ..registry import all_analyses

    for name, a in sorted(all_analyses().items()):
        add(f"profinsight://analyses/{name}", f"analysis {name}", a.title, functools.partial(analysis_page, name))
    for name, path in doc_pages().items():
        add(f"profinsight://docs/{name}", f"docs {name}", f"docs/{name}.md", functools.partial(path.read_text, "utf-8"))


def _add_prompt(server) -> None:
    @server.prompt(name="triage", title="Triage this profile", description="Walk a profile as the user's guide does")
    def triage(path: str) -> str:
        return TRIAGE.format(path=path)


def serve_stdio(session: Session) -> None:
    """Serve ``session`` on stdin/stdout until the client closes the stream."""
    build(session).run("stdio")
