"""A bundle per function: each function's asset leaves out what only another function, or a channel the stack does not
turn on, imports.

One install serves every function of a stack: `LambdaBundle.build` installs, prunes and compiles once per process,
then copies that tree (hard links) into each function's asset and slims the copy (`slim_bundle`). What a function
leaves out (`left_out`) is decided from two tables:

- `NEEDED_BY`: the libraries only some functions import, each with when. The answer API's AG-UI routes import
  `ag-ui-protocol`; the Slack channel imports `slack-sdk` (its announcer in the router and the sweep, its door in the
  answer API); email and shaped webhooks render with `jinja2`; web push sends with `pywebpush` (the router and the
  sweep). A library a left-out one alone requires goes with it (`markupsafe` with `jinja2`; `py-vapid`, `http-ece`,
  `aiohttp` and `cryptography` with `pywebpush`), read from the installed packages' own metadata.
- `RUNTIME_PARTS`: parts of the runtime no Lambda imports (the laptop emulator, the console script) or only the
  answer API does (its routes and pages).

A library is kept whatever the tables say when the graph source imports it by name, or the requirements found beside
the graph name it (the graph's own dependency): a graph that needs `jinja2` through another library (LangChain's
`jinja2` prompt templates) names it in its requirements. The refund stack's router asset: 68.9 MB unzipped, 6.3 MB
less than the whole install (`bench/bench_cold_start.py`).
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ("FUNCTIONS", "NEEDED_BY", "RUNTIME_PARTS", "Needed", "RuntimePart", "left_out", "slim_bundle")

FUNCTIONS = ("router", "sweep", "api")
"""The functions a stack deploys: the router, the sweep and the answer API."""


@dataclass(frozen=True)
class Needed:
    """A library (a distribution, by its project name) only some functions import.

    Attributes:
        distribution: its project name, normalized (PEP 503).
        functions: the functions that import it.
        channels: the channels that make them import it; empty: they always do.
        reason: what imports it.
    """

    distribution: str
    functions: frozenset[str]
    channels: frozenset[str]
    reason: str


@dataclass(frozen=True)
class RuntimePart:
    """A folder of the runtime (`agent_wait/...`) only some functions import (none: no Lambda does)."""

    path: str
    functions: frozenset[str]
    reason: str


EVERY = frozenset(FUNCTIONS)
NEEDED_BY: tuple[Needed, ...] = (
    Needed("ag-ui-protocol", frozenset({"api"}), frozenset(), "the answer API's AG-UI routes (`host/api/_agui.py`)"),
    Needed(
        "slack-sdk", EVERY, frozenset({"slack"}), "the Slack channel: its announcer (router, sweep), its door (the API)"
    ),
    Needed("jinja2", EVERY, frozenset({"email", "shaped"}), "email and shaped webhooks render their messages with it"),
    Needed("a2a-sdk", EVERY, frozenset({"a2a"}), "A2A (`AgentWait(a2a=...)`): the API's routes, the router's pushes"),
    Needed(
        "pywebpush",
        frozenset({"router", "sweep"}),
        frozenset({"push"}),
        "web push: the router and the sweep encrypt and send each push (the answer API only keeps subscriptions)",
    ),
    Needed("mcp", frozenset({"api"}), frozenset({"mcp"}), "the answer API's MCP server (`AgentWait(mcp=...)`)"),
    Needed("webauthn", frozenset({"api"}), frozenset({"passkey"}), "passkeys (`AgentWait(passkeys=True)`): the API"),
)
"""The libraries each function leaves out when neither it nor the stack's channels need them."""
RUNTIME_PARTS: tuple[RuntimePart, ...] = (
    RuntimePart("agent_wait/host/api", frozenset({"api"}), "the answer API's routes and pages"),
    RuntimePart("agent_wait/local", frozenset(), "the laptop emulator (`agent-wait dev`): moto and the CDK"),
    RuntimePart("agent_wait/cli", frozenset(), "the `agent-wait` console script"),
    RuntimePart("agent_wait/testing", frozenset(), "the conformance suites a backend's own tests run"),
)
"""Parts of the runtime each function leaves out when it does not import them."""

_RUNTIME_PINS = "# the agent-wait runtime's pins"
"""The line `requirements._completed` puts between a found file's requirements and the runtime's pins."""


def left_out(function: str, channels: Iterable[str] = ()) -> tuple[str, ...]:
    """What `function`'s asset leaves out, given the channels the stack turns on: project names, then runtime paths.

    Raises:
        ValueError: `function` is not one of `FUNCTIONS`.
    """
    if function not in FUNCTIONS:
        raise ValueError(f"function must be one of {list(FUNCTIONS)}; got {function!r}")
    on = frozenset(channels)
    libraries = [
        needed.distribution
        for needed in NEEDED_BY
        if function not in needed.functions or (needed.channels and not needed.channels & on)
    ]
    parts = [part.path for part in RUNTIME_PARTS if function not in part.functions]
    return (*sorted(libraries), *parts)


def slim_bundle(
    bundle_dir: Path, leave_out: Sequence[str], *, graph_sources: Sequence[str] = (), requirements: str = ""
) -> dict[str, int]:
    """Drop from an installed bundle what `leave_out` names (`left_out`); returns the bytes dropped, by what.

    A library is dropped with every installed library that only it, or only what is dropped, requires; it is kept
    when a Python file under one of `graph_sources` (top-level names in `bundle_dir`) imports it, or
    `requirements` name it before the runtime's own pins (a file found beside the graph). A runtime path is dropped
    whole.
    """
    dropped: dict[str, int] = {}
    installed = _installed(bundle_dir)
    imported, named = _imported(bundle_dir, graph_sources), _named(requirements)
    libraries = {_normalize(name) for name in leave_out if "/" not in name}
    drop = {
        name for name in libraries if name in installed and name not in named and not installed[name].imports & imported
    }
    drop |= _only_required_by(drop, installed)
    for name in sorted(drop):
        dropped[name] = _remove_distribution(bundle_dir, installed[name])
    for path in (name for name in leave_out if "/" in name):
        target = bundle_dir / path
        if target.exists():
            dropped[path] = _remove_tree(target)
    return dropped


@dataclass(frozen=True)
class _Distribution:
    """An installed distribution: its metadata folder, the files it installed, what it requires, what it makes
    importable."""

    info: Path
    files: tuple[str, ...]
    requires: frozenset[str]
    imports: frozenset[str]


def _installed(bundle_dir: Path) -> dict[str, _Distribution]:
    """Every distribution installed in `bundle_dir`, by normalized project name (from each `*.dist-info`)."""
    found: dict[str, _Distribution] = {}
    for info in bundle_dir.glob("*.dist-info"):
        metadata = _read(info / "METADATA")
        name = re.search(r"^Name:\s*(\S+)", metadata, re.MULTILINE)
        if name is None:
            continue
        requires = frozenset(
            _normalize(re.split(r"[\s\[=<>~!;(]", line, maxsplit=1)[0])
            for line in re.findall(r"^Requires-Dist:\s*(.+)$", metadata, re.MULTILINE)
            if not re.search(r"\bextra\s*==", line)  # an extra's: installed only when asked for
        )
        files = tuple(line.split(",", 1)[0] for line in _read(info / "RECORD").splitlines() if line.strip())
        tops = {Path(file).parts[0] for file in files if file and not file.startswith("..")}
        imports = frozenset(
            top.removesuffix(".py") for top in tops if not top.endswith((".dist-info", ".data")) and top != "bin"
        )
        found[_normalize(name.group(1))] = _Distribution(info, files, requires, imports)
    return found


def _only_required_by(drop: set[str], installed: dict[str, _Distribution]) -> set[str]:
    """The distributions that only `drop` (or what it takes along) require, found by closure."""
    taken: set[str] = set()
    while True:
        gone = drop | taken
        kept = [dist for name, dist in installed.items() if name not in gone]
        needed = {required for dist in kept for required in dist.requires}
        more = {
            required
            for name in gone
            for required in installed[name].requires
            if required in installed and required not in needed and required not in gone
        }
        if not more:
            return taken
        taken |= more


def _remove_distribution(bundle_dir: Path, dist: _Distribution) -> int:
    """Delete the files a distribution installed (and their compiled bytecode), then its emptied folders."""
    size = 0
    folders: set[Path] = set()
    for file in dist.files:
        path = (bundle_dir / file).resolve()
        if bundle_dir.resolve() not in path.parents or not path.is_file():
            continue
        for compiled in _bytecode_of(path):
            size += compiled.stat().st_size
            compiled.unlink()
        size += path.stat().st_size
        path.unlink()
        folders.add(path.parent)
    if dist.info.exists():
        size += _remove_tree(dist.info)
    for folder in sorted(folders, key=lambda p: -len(p.parts)):  # deepest first: a folder emptied, then its parent
        _remove_if_empty(folder, stop=bundle_dir.resolve())
    return size


def _bytecode_of(module: Path) -> Iterator[Path]:
    if module.suffix == ".py":
        yield from (module.parent / "__pycache__").glob(f"{module.stem}.*.pyc")


def _remove_if_empty(folder: Path, *, stop: Path) -> None:
    while folder != stop and folder.is_dir():
        cache = folder / "__pycache__"
        if cache.is_dir() and not any(cache.iterdir()):
            cache.rmdir()
        if any(folder.iterdir()):
            return
        folder.rmdir()
        folder = folder.parent


def _remove_tree(path: Path) -> int:
    size = sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) if path.is_dir() else 0
    if path.is_dir():
        shutil.rmtree(path)
    else:
        size = path.stat().st_size
        path.unlink()
    return size


def _imported(bundle_dir: Path, graph_sources: Sequence[str]) -> frozenset[str]:
    """The top-level modules any Python file under the graph sources imports by name."""
    names: set[str] = set()
    for source in graph_sources:
        root = bundle_dir / source
        files = [root] if root.is_file() else sorted(root.rglob("*.py")) if root.is_dir() else []
        for file in files:
            try:
                tree = ast.parse(_read(file))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names.add(node.module.split(".")[0])
    return frozenset(names)


def _named(requirements: str) -> frozenset[str]:
    """The projects a found requirements file names itself (its lines before the runtime's pins), normalized."""
    own = requirements.split(_RUNTIME_PINS, 1)[0] if _RUNTIME_PINS in requirements else ""
    return frozenset(
        _normalize(re.split(r"[\s\[=<>~!;(@]", line.strip(), maxsplit=1)[0])
        for line in own.splitlines()
        if line.strip() and not line.strip().startswith(("#", "-"))
    )


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
