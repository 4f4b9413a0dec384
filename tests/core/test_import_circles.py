"""No import circles: in the runtime, and among the benches.

A circle hides which of two modules is the lower one: each borrows from the other, so neither can be read, tested
or moved alone. The four there were (the decision and its tracing, the host's wiring and its channel builders, the
emulated stack and its schedules, two benches) each ran through an import inside a function or under
`TYPE_CHECKING`, so this counts every import statement wherever it stands, not only those run on import.

An edge goes to the module a statement names: `from a.b import c` is `a.b.c` when that is a module of the tree,
else `a.b` (a name from its `__init__`). A package's `__init__` is not an edge of its submodules (Python loads it
first, but that is loading, not borrowing), as the rule table of `test_imports.py` also reads it.

Circles are counted twice: between modules, and between the package's rooms (each folder under `agent_wait/`, and
each module at its root, taken whole). Two folders that borrow from each other through different modules have no
module circle, yet neither folder stands below the other, so a reader cannot tell which is the lower layer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime"
BENCH = ROOT / "bench"


def _modules(root: Path, base: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Each module's edges to the modules of `modules` it imports, wherever the import statement stands."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, node.module] if node.module else parts)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            for named in targets:
                target = named
                while target and target not in modules:  # `import a.b.c` of a name inside a.b: the module a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _submodule_or(base: str, name: str, modules: Mapping[str, Path]) -> str:
    """`from base import name`: the module `base.name` when there is one, else `base` (a name it defines)."""
    return f"{base}.{name}" if f"{base}.{name}" in modules else base


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def rooms_graph(graph: Mapping[str, Iterable[str]], package: str) -> dict[str, set[str]]:
    """`graph` with each module of `package` replaced by its room: the folder or root module right under `package`."""

    def room(module: str) -> str:
        return ".".join(module.split(".")[:2]) if module.startswith(f"{package}.") else module

    rooms: dict[str, set[str]] = {}
    for source, targets in graph.items():
        edges = rooms.setdefault(room(source), set())
        edges.update(room(target) for target in targets if room(target) != room(source))
    return rooms


def test_the_checker_finds_a_circle_through_an_import_inside_a_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import B\n")
    (package / "b.py").write_text("def f():\n    from pkg import a\n")
    (package / "c.py").write_text("from pkg.a import B\n")
    assert circles(import_graph(_modules(package, tmp_path))) == [["pkg.a", "pkg.b"]]


def test_the_checker_finds_two_folders_that_borrow_from_each_other_through_different_modules(tmp_path: Path) -> None:
    for folder in ("low", "high"):
        (tmp_path / "pkg" / folder).mkdir(parents=True)
        (tmp_path / "pkg" / folder / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "high" / "door.py").write_text("from pkg.low.base import Base\n")
    (tmp_path / "pkg" / "low" / "base.py").write_text("")
    (tmp_path / "pkg" / "low" / "uses.py").write_text("def f():\n    from pkg.high import door\n")
    graph = import_graph(_modules(tmp_path / "pkg", tmp_path))
    assert circles(graph) == []
    assert circles(rooms_graph(graph, "pkg")) == [["pkg.high", "pkg.low"]]


@pytest.mark.parametrize(
    ("root", "base"), [(RUNTIME / "agent_wait", RUNTIME), (BENCH, BENCH)], ids=["runtime", "bench"]
)
def test_no_import_circles(root: Path, base: Path) -> None:
    found = circles(import_graph(_modules(root, base)))
    assert found == [], f"import circles (each a set of modules that import one another): {found}"


def test_no_two_rooms_of_the_runtime_import_each_other() -> None:
    found = circles(rooms_graph(import_graph(_modules(RUNTIME / "agent_wait", RUNTIME)), "agent_wait"))
    assert found == [], f"folders (or root modules) of agent_wait that import one another, around: {found}"
