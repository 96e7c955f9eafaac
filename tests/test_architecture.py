"""Every file on its floor: the import graph of the package (and of the TypeScript viewer) only
ever points down the layers, and has no circles.

Every ``import`` counts, the ones inside functions too, and so do ``importlib.import_module``
calls with a literal name.  ``from . import x`` resolves to the submodule ``x`` where there is
one, so a package and its own submodules are not a false circle.  docs/architecture.md draws the
same layers; change both together.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "profinsight"
TS = ROOT / "ts"

#: bottom to top; a module may import its own layer's package and anything below it
LAYERS: list[tuple[str, ...]] = [
    # the version, the error family, the display slots and the busy-cores window: import nothing
    # of profinsight
    ("_version", "errors", "hooks", "_cores"),
    # words, declarations, what an analysis returns, interval nesting: no profile code at all
    ("diagnostics", "schema", "i18n", "samples", "capabilities", "results", "nesting"),
    # the analysis table that Profile consults (filled by the modules above it)
    ("registry",),
    ("importers",),
    ("discovery",),
    ("store",),
    ("profile",),
    ("analyses",),
    ("advisor", "comparison", "timeline"),
    ("api", "testing"),
    ("render",),
    ("collection",),
    ("server",),
    ("agents",),
    ("cli",),
    ("jupyter",),
]
#: the package root re-exports the public names lazily: it stands above every layer
TOP = ("__init__", "__main__")


def _unit(module: str) -> str:
    """The layer unit of a dotted module name below ``profinsight`` (its first component)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit: str) -> int:
    if unit in TOP:
        return len(LAYERS)
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"profinsight.{unit} is on no floor: add it to LAYERS (and to docs/architecture.md)")


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every profinsight module ``name`` imports, anywhere in the file."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if _is_package(path) else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        while target and target not in modules:  # profinsight.x.y.name -> the module that defines it
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("profinsight"):
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("profinsight"):
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                add(sub if sub in modules else mod)
        elif isinstance(node, ast.Call) and _is_import_module(node.func):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                target = node.args[0].value
                if target.startswith("."):
                    level = len(target) - len(target.lstrip("."))
                    base = package.split(".")
                    target = ".".join(base[: len(base) - level + 1] + [target.lstrip(".")])
                if target.startswith("profinsight"):
                    add(target)
    return found


def _is_import_module(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module"
    )


def python_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports that point up a layer, or sideways into another package of the same layer."""
    bad = []
    for src, targets in sorted(graph.items()):
        su = _unit(src)
        for dst in sorted(targets):
            du = _unit(dst)
            if su == du:
                continue
            ls, ld = _layer(su), _layer(du)
            if ld > ls or (ld == ls and su not in TOP):
                bad.append(f"{src} -> {dst} (floor {ls} -> {ld})")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_python_module_is_on_a_floor():
    for name in python_graph():
        _layer(_unit(name))


def test_no_python_import_points_up():
    bad = upward_imports(python_graph())
    assert not bad, "imports that point up (or across) the layers:\n  " + "\n  ".join(bad)


def test_no_python_import_circle():
    found = cycles(python_graph())
    assert not found, "import circles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_local_imports_and_import_module(tmp_path):
    """The checker itself can fail: a function-local upward import and an ``import_module`` by
    name are both caught, and ``from . import sub`` is the submodule, not the package."""
    modules = {
        "profinsight.store": tmp_path / "store" / "__init__.py",
        "profinsight.store.cache": tmp_path / "store" / "cache.py",
        "profinsight.api": tmp_path / "api.py",
        "profinsight.cli": tmp_path / "cli.py",
    }
    for p in modules.values():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    modules["profinsight.store"].write_text("from . import cache\n")
    modules["profinsight.store.cache"].write_text(
        "import importlib\ndef f():\n    from ..api import load\n    importlib.import_module('profinsight.cli')\n"
    )
    graph = {n: _imports(n, p, modules) for n, p in modules.items()}
    assert graph["profinsight.store"] == {"profinsight.store.cache"}
    assert graph["profinsight.store.cache"] == {"profinsight.api", "profinsight.cli"}
    assert len(upward_imports(graph)) == 2
    graph["profinsight.api"] = {"profinsight.store.cache"}
    assert cycles(graph) == [["profinsight.api", "profinsight.store.cache"]]


# --- TypeScript ------------------------------------------------------------------------------

#: bottom to top, by path below ts/ (the first matching prefix wins)
TS_LAYERS: list[tuple[str, ...]] = [
    ("app/generated/", "app/i18n", "app/dom", "app/link"),  # wire types from schema/wire.py; labels; DOM helpers; links
    ("app/api",),  # the one door to the server
    ("app/widgets/", "app/timeline/"),  # shared components; the timeline's data, viewport, details, canvas
    ("app/views/",),  # one module per view (+ views/types: what a view is and gets)
    ("app/viewer",),  # the shell that hosts the views
    ("standalone", "index", "lab/", "mime"),  # the hosts: standalone page, JupyterLab plugin, notebook renderer
]
_TS_IMPORT = re.compile(r"""(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)""")


def ts_graph() -> dict[str, set[str]]:
    files = {p.relative_to(TS).with_suffix("").as_posix(): p for p in TS.rglob("*.ts") if not p.name.endswith(".d.ts")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        deps = set()
        for m in _TS_IMPORT.finditer(path.read_text()):
            spec = m.group(1) or m.group(2)
            target = (Path(name).parent / spec).as_posix()
            target = re.sub(r"\.(js|ts)$", "", str(Path(target)))
            target = _normpath(target)
            if target in files:
                deps.add(target)
            elif f"{target}/index" in files:
                deps.add(f"{target}/index")
        graph[name] = deps
    return graph


def _normpath(p: str) -> str:
    out: list[str] = []
    for part in p.split("/"):
        if part == "..":
            out.pop()
        elif part not in ("", "."):
            out.append(part)
    return "/".join(out)


def _ts_layer(name: str) -> int:
    for i, prefixes in enumerate(TS_LAYERS):
        if any(name == p.rstrip("/") or name.startswith(p) for p in prefixes):
            return i
    raise AssertionError(f"ts/{name}.ts is on no floor: add it to TS_LAYERS (and docs/architecture.md)")


def _ts_unit(name: str) -> str:
    """Files of one folder are one unit (a view and its helpers may import each other)."""
    return name.rpartition("/")[0] if "/" in name else name


@pytest.mark.skipif(not TS.exists(), reason="no TypeScript tree")
def test_no_typescript_import_points_up_or_circles():
    graph = ts_graph()
    bad = []
    for src, deps in sorted(graph.items()):
        for dst in sorted(deps):
            ls, ld = _ts_layer(src), _ts_layer(dst)
            if ld > ls or (ld == ls and _ts_unit(src) != _ts_unit(dst) and ls not in (0, len(TS_LAYERS) - 1)):
                bad.append(f"{src} -> {dst} (floor {ls} -> {ld})")
    assert not bad, "TypeScript imports that point up the layers:\n  " + "\n  ".join(bad)
    found = cycles(graph)
    assert not found, "TypeScript import circles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_the_architecture_page_names_every_floor():
    """docs/architecture.md draws the same floors as LAYERS: a unit added here must appear there."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    missing = [u for units in LAYERS for u in units if f"{u}/" not in page and f"{u}.py" not in page]
    assert not missing, f"docs/architecture.md does not place: {missing}"
