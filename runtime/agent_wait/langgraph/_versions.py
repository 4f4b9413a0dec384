"""A compiled graph's version (docs/versions.md): its structure's hash, its `@wait` functions, and the questions a
thread waits on in nodes the graph running now no longer has."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.types import Interrupt

from agent_wait.asking.flow import WaitFlow
from agent_wait.asking.versions import Migration, fingerprint, parameters_fingerprint

__all__ = (
    "VersionedGraph",
    "graph_fingerprint",
    "node_of_checkpoint_ns",
    "orphaned_interrupts",
    "versioned",
    "wait_functions",
)


def graph_fingerprint(graph: Any) -> str:
    """A stable hash of a compiled graph's structure: node names, edges, conditional edges and their ends, waiting
    edges and each node's declared `Command` destinations. Not the nodes' code: a node changed inside is the
    same structure (a `@wait` function's parameters are checked on their own)."""
    builder = getattr(graph, "builder", None)
    nodes = getattr(builder, "nodes", None)
    if not isinstance(nodes, Mapping):  # not built from a StateGraph (a functional @entrypoint): its node names
        return fingerprint({"nodes": sorted(map(str, getattr(graph, "nodes", {}) or {}))})
    branches = {
        str(source): {str(name): _ends(spec.ends) for name, spec in specs.items()}
        for source, specs in getattr(builder, "branches", {}).items()
    }
    return fingerprint(
        {
            "nodes": {str(name): _ends(getattr(spec, "ends", None)) for name, spec in nodes.items()},
            "edges": sorted([str(a), str(b)] for a, b in getattr(builder, "edges", ())),
            "branches": branches,
            "waiting": sorted(
                [sorted(map(str, starts)), str(end)] for starts, end in getattr(builder, "waiting_edges", ())
            ),
        }
    )


def _ends(ends: Any) -> Any:
    if ends is None:
        return None
    if isinstance(ends, Mapping):
        return sorted([str(key), str(value)] for key, value in ends.items())
    return sorted(map(str, ends))


def wait_functions(graph: Any) -> dict[str, str]:
    """The `@wait` functions a graph can reach, by name, each with its parameters' hash.

    Found among the nodes' functions, the tools of a `ToolNode`, and the functions and tools a node's function names
    (its globals and closure, one level down). A `@wait` function reached only deeper than that is not found: its
    questions are then guarded by their node alone (docs/versions.md).
    """
    found: dict[str, str] = {}
    for candidate in _candidates(graph):
        flow = _wait_flow(candidate)
        if flow is not None:
            sig = flow.signature
            found[sig.function] = fingerprint([parameters_fingerprint(sig.signature, sig.visible), sig.decision])
    return found


def _candidates(graph: Any) -> Iterator[Any]:
    nodes = getattr(getattr(graph, "builder", None), "nodes", None)
    runnables = [spec.runnable for spec in nodes.values()] if isinstance(nodes, Mapping) else []
    seen: set[int] = set()
    for runnable in runnables:
        for fn in _functions_of(runnable):
            for candidate in (fn, *_referenced(fn)):
                for inner in _functions_of(candidate) or (candidate,):
                    if id(inner) not in seen:
                        seen.add(id(inner))
                        yield inner


def _functions_of(obj: Any) -> list[Any]:
    """The plain functions behind a node's runnable, a `ToolNode`'s tools, or a tool."""
    tools = getattr(obj, "tools_by_name", None)
    if isinstance(tools, Mapping):
        return [fn for tool in tools.values() for fn in _functions_of(tool)]
    return [fn for name in ("func", "afunc", "coroutine") if callable(fn := getattr(obj, name, None))]


def _referenced(fn: Callable[..., Any]) -> list[Any]:
    """What a function names from its module's globals and its closure (a `@wait` function it calls, a tool)."""
    code = getattr(fn, "__code__", None)
    scope = getattr(fn, "__globals__", None)
    named = [scope[name] for name in code.co_names if name in scope] if code is not None and scope else []
    cells = [cell.cell_contents for cell in getattr(fn, "__closure__", None) or () if _filled(cell)]
    return [obj for obj in (*named, *cells) if callable(obj)]


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _wait_flow(fn: Any) -> WaitFlow[Any] | None:
    """The `WaitFlow` a `@wait` wrapper closes over (`agent_wait.asking.flow.wait_decorator` makes it), or None."""
    for cell in getattr(fn, "__closure__", None) or ():
        if _filled(cell) and isinstance(cell.cell_contents, WaitFlow):
            return cell.cell_contents
    return None


def node_of_checkpoint_ns(namespace: Any) -> str | None:
    """The top-level node of a task's `checkpoint_ns` (`"approve:<task id>"`, `"outer:<id>|inner:<id>"`)."""
    if not isinstance(namespace, str) or not namespace:
        return None
    return namespace.split("|", 1)[0].split(":", 1)[0] or None


def orphaned_interrupts(graph: Any, state: Any) -> list[Interrupt]:
    """Interrupts the thread's last checkpoint holds for tasks the graph running now does not prepare: the thread
    waits in a node this graph no longer has (or no longer reaches). LangGraph's own state shows none of them, and
    a resume of one runs nothing at all (tests/langgraph/test_versions.py pins it)."""
    checkpointer = getattr(graph, "checkpointer", None)
    if state.interrupts or state.created_at is None or checkpointer is None or isinstance(checkpointer, bool):
        return []  # parked as LangGraph sees it, or no checkpoint at all (a new thread): nothing more to read
    saved = checkpointer.get_tuple(state.config)
    prepared = {task.id for task in state.tasks}
    found: list[Interrupt] = []
    for task_id, channel, value in getattr(saved, "pending_writes", None) or ():
        if channel == "__interrupt__" and task_id not in prepared:
            items = value if isinstance(value, (list, tuple)) else (value,)
            found.extend(item for item in items if isinstance(item, Interrupt))
    return found


@dataclass(frozen=True, slots=True)
class VersionedGraph:
    """What `AGENT_WAIT_GRAPH` may name to give the hosted graph a version and a migration: `versioned(...)`."""

    graph: Any
    """A compiled graph, or a factory that takes the checkpointer and returns one (as `AGENT_WAIT_GRAPH` takes)."""
    version: str | None = None
    """Your own name for this deploy (`LangGraphAdapter(version=...)`)."""
    migration: Migration | None = None
    """The migration (`LangGraphAdapter(migration=...)`)."""


def versioned(graph: Any, *, version: str | None = None, migration: Migration | None = None) -> VersionedGraph:
    """Name a hosted graph's version and migration for the router (docs/versions.md).

    Example:
        >>> from agent_wait.langgraph import versioned  # doctest: +SKIP
        >>> agent = versioned(build_graph, version="2026-12-04", migration=migrate)  # doctest: +SKIP

    With `AGENT_WAIT_GRAPH=my_agent:agent`, the router builds `LangGraphAdapter(graph, version=..., migration=...)`.
    The arguments are checked when the router builds the adapter (`ArgumentError`).
    """
    return VersionedGraph(graph, version, migration)
