"""The house rules, read from the source: arrows one way, no import cycles, small rooms.

`brain` (read side, formats) ← `validators` ← `dream`: nothing in `brain/` or `validators/` imports
`dream/`, and nothing in `brain/` imports `validators/` except `brain.cli`, whose `brain validate`
runs them. Every import counts, lazy ones inside a function too: a lazy import is still a
dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"brain": 0, "validators": 1, "dream": 2}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    return {_module(p): p for pkg in LAYERS for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        kept = package[: len(package) - (node.level - 1)]
        base = ".".join(kept + ([base] if base else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The project module an imported name lands in: its longest known prefix."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> nx.DiGraph:
    modules = _sources()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for name in _imported(node, module, path.name == "__init__.py"):
                target = _owner(name, modules)
                if target and target != module:
                    graph.add_edge(module, target)
    return graph


def test_the_read_side_never_imports_the_compiler():
    upward = [f"{a} -> {b}" for a, b in import_graph().edges
              if LAYERS[a.split(".")[0]] < LAYERS[b.split(".")[0]] and (a, b.split(".")[0]) != ("brain.cli", "validators")]
    assert upward == []


def test_no_module_imports_itself_back():
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def _functions():
    for path in _sources().values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield path.relative_to(ROOT), node


def _is_click_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("option" in ast.unparse(d) or "command" in ast.unparse(d) for d in node.decorator_list)


def test_modules_stay_small():
    big = [f"{p.relative_to(ROOT)} {n}" for p in _sources().values()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400]
    assert big == []


def test_functions_stay_short_and_take_few_parameters():
    long, wide = [], []
    for path, node in _functions():
        if node.end_lineno - node.lineno + 1 > 60:
            long.append(f"{path}:{node.name}")
        args = node.args
        count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
        count -= bool(args.args and args.args[0].arg in ("self", "cls"))
        if count > 6 and not _is_click_command(node):  # a click command's options are its parameters
            wide.append(f"{path}:{node.name}")
    assert (long, wide) == ([], [])
