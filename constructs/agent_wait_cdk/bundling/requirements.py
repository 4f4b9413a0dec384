"""Which requirements a Lambda bundle installs: given, found beside the graph, or the runtime's own pins.

The requirements are `requirements_file` when given (a complete pinned closure, installed as it is with
`--no-deps`). Without it they are found the way `PythonFunction` users expect (`find_dependencies`): in the
folder of the graph's module, each graph source folder, then the working directory, the first of
`requirements.txt`, `uv.lock` (exported with `uv export`) and `pyproject.toml` (its `[project] dependencies`).
A file that names the CDK (`aws-cdk-lib`, `aws-cdk.*`) holds the CDK app's own dependencies, never the
graph's (the root `requirements.txt` that `cdk init` writes): it is passed over, and the search goes on. A
found file is installed with its dependencies resolved, on top of the runtime's own pins for every package it
does not name. When none is found, the runtime's own pins are installed as they are (`bundle_requirements`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_wait_cdk.bundling.errors import BundleError

__all__ = (
    "CDK_APP_PROJECTS",
    "DEPENDENCY_FILES",
    "REQUIREMENTS_FILE",
    "UV_EXPORT",
    "Dependencies",
    "bundle_requirements",
    "find_dependencies",
    "search_dependencies",
)

REQUIREMENTS_FILE = Path(__file__).parent.parent / "requirements-lambda.txt"
"""The runtime's pinned `host` dependencies, exported from uv.lock:
`uv export --frozen --no-dev --extra langgraph-host --extra mcp --extra a2a --extra push --extra passkey --no-hashes
--no-emit-project` (a function's bundle keeps MCP's, A2A's, web push's and passkeys' libraries only when the stack turns
that feature on: `slim.NEEDED_BY`). A test fails when they drift."""

DEPENDENCY_FILES = ("requirements.txt", "uv.lock", "pyproject.toml")
"""What is looked for, in this order in each folder, when no `requirements_file` is given."""
CDK_APP_PROJECTS = ("aws-cdk-lib",)
"""A dependency file naming one of these (or any `aws-cdk-*` / `aws-cdk.*` project, CDK v1's) is a CDK app's:
the CDK and its constructs run where `cdk synth` runs, never in Lambda (aws-cdk-lib alone is over 100 MB)."""
UV_EXPORT = ("export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project")
"""The `uv` arguments that turn a found `uv.lock` into requirements (run in the lock's folder)."""


@dataclass(frozen=True)
class Dependencies:
    """The requirements a bundle installs, and where they came from.

    Attributes:
        requirements: the requirements text, without a line for agent-wait itself.
        origin: where they came from, in words, with any CDK app file passed over; `AgentWait` says it in the
            synth output, and every error about the bundle repeats it.
        resolve: True to install them with their dependencies resolved for the Lambda platform (a found
            file, PythonFunction's way); False to install them as they are (`--no-deps`), a complete closure.
    """

    requirements: str
    origin: str
    resolve: bool = False
    passed_over: tuple[str, ...] = ()
    """The CDK app's own dependency files met on the way, each with why (see `CDK_APP_PROJECTS`)."""


def find_dependencies(folders: Sequence[str | os.PathLike[str]]) -> Dependencies | None:
    """The first of `DEPENDENCY_FILES` found, folder by folder, that is not the CDK app's; None when none is.

    In each folder, `requirements.txt` is read as it is; else `uv.lock` is exported with `uv export
    --frozen --no-dev --no-hashes --no-emit-project` (uv must be on PATH); else `pyproject.toml`'s
    `[project] dependencies` are read (a `pyproject.toml` without a `[project]` table declares none, and
    the search goes on). A file that names the CDK (`CDK_APP_PROJECTS`, any `aws-cdk-*`) is the CDK app's own
    and is passed over: the next file of that folder, then the next folder, is looked at. A folder that is
    agent-wait's own project (a checkout of this repository) is skipped: its dependencies are the runtime's
    pins already. A line for agent-wait itself is dropped from every source. The result is `resolve=True`;
    its `passed_over` names the CDK app's files met before it (`search_dependencies` names them even when
    nothing is found).

    Example:
        found = find_dependencies([Path("src/my_agent"), Path.cwd()])

    Raises:
        BundleError: the file found cannot be read: a malformed `pyproject.toml`, dynamic or malformed
            `[project] dependencies`, a `uv.lock` with no uv on PATH, or `uv export` failing.
    """
    found, _ = search_dependencies(folders)
    return found


def search_dependencies(folders: Sequence[str | os.PathLike[str]]) -> tuple[Dependencies | None, tuple[str, ...]]:
    """`find_dependencies`, and the CDK app's files passed over on the way (each with why), found or not."""
    passed_over: list[str] = []
    for folder in dict.fromkeys(Path(entry).resolve() for entry in folders):
        if _is_agent_wait_project(folder):
            continue
        for origin, read in _candidates(folder):
            requirements = read()
            if requirements is None:
                continue
            cdk = _cdk_project(requirements)
            if cdk is not None:
                passed_over.append(f"{origin}: it names {cdk}, the CDK app's own dependencies, never the graph's")
                continue
            found = Dependencies(_without_self(requirements), origin, resolve=True, passed_over=tuple(passed_over))
            return found, found.passed_over
    return None, tuple(passed_over)


def _candidates(folder: Path) -> list[tuple[str, Callable[[], str | None]]]:
    """The dependency files of `folder`, in `DEPENDENCY_FILES` order: (origin in words, a reader returning the
    requirements, or None for a `pyproject.toml` that declares none)."""
    found: list[tuple[str, Callable[[], str | None]]] = []
    requirements, lock, pyproject = (folder / name for name in DEPENDENCY_FILES)
    if requirements.is_file():
        found.append((str(requirements), lambda: _read(requirements)))
    if lock.is_file():
        found.append((f"{lock}, exported with: uv {' '.join(UV_EXPORT)}", lambda: _uv_export(lock)))
    if pyproject.is_file():
        found.append((f"{pyproject} [project] dependencies", lambda: _project_dependencies(pyproject)))
    return found


def _cdk_project(requirements: str) -> str | None:
    """The first CDK project (`CDK_APP_PROJECTS`, `aws-cdk-*`) the requirements name; None when they name none."""
    for line in requirements.splitlines():
        name = _name(line)
        if name is not None and (name in CDK_APP_PROJECTS or name.startswith("aws-cdk-")):
            return name
    return None


def bundle_requirements(
    graph_folders: Sequence[Path], requirements_file: str | os.PathLike[str] | None = None
) -> Dependencies:
    """The requirements a bundle installs, and where they came from.

    `requirements_file` when given, as it is (`resolve=False`). Otherwise the first found (`find_dependencies`)
    in `graph_folders` (the folder of the graph's module first), then the working directory, completed with the
    runtime's pins for every package it does not name (`resolve=True`); none found: the runtime's pins as they
    are. The origin names the CDK app's files passed over on the way.

    Raises:
        BundleError: a file given or found cannot be read (see `find_dependencies`).
    """
    if requirements_file is not None:
        path = Path(requirements_file)
        given = _read(path, field="requirements_file")
        return Dependencies(_without_self(given), f"requirements_file {path}, installed as it is (--no-deps)")
    folders = [*graph_folders, Path.cwd()]
    pins = _read(REQUIREMENTS_FILE, field="requirements_file")
    found, passed_over = search_dependencies(folders)
    skipped = "".join(f"; passed over {entry}" for entry in passed_over)
    if found is None:
        searched = ", ".join(str(folder) for folder in dict.fromkeys(f.resolve() for f in folders))
        origin = f"the runtime's pins ({REQUIREMENTS_FILE.name}): none of {', '.join(DEPENDENCY_FILES)} in {searched}"
        return Dependencies(_without_self(pins), origin + skipped, passed_over=passed_over)
    origin = f"{found.origin}, resolved on top of the runtime's pins for what it does not name{skipped}"
    return Dependencies(_completed(found.requirements, pins), origin, resolve=True, passed_over=passed_over)


def _without_self(requirements: str) -> str:
    """The requirements without a line for agent-wait itself: the bundle copies the runtime from its source,
    and a user's exported requirements (`uv export`, `pip freeze`) usually name it."""
    kept = []
    for line in requirements.splitlines():
        stripped = line.strip()
        if _name(line) == "agent-wait" or stripped in (".", "-e ."):
            continue
        kept.append(line)
    return "\n".join(kept) + ("\n" if requirements.endswith("\n") else "")


def _name(line: str) -> str | None:
    """The normalized project name a requirement line installs (PEP 503); None for comments and options."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "-")):
        return None
    name = re.split(r"[\s\[=<>~!@;(]", stripped, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower() or None


def _completed(found: str, pins: str) -> str:
    """`found` followed by the runtime's pins for every project it does not name, so the router's own
    dependencies are always there (a found file rarely names them: it names agent-wait, which is dropped)."""
    named = {_name(line) for line in found.splitlines()}
    missing = [line.strip() for line in pins.splitlines() if _name(line) is not None and _name(line) not in named]
    if not missing:
        return found
    head = found if not found or found.endswith("\n") else found + "\n"
    return head + "# the agent-wait runtime's pins for what the above does not name\n" + "\n".join(missing) + "\n"


def _read(path: Path, *, field: str = "the requirements file") -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BundleError(f"{field} {str(path)!r} cannot be read ({exc.strerror})") from None


def _is_agent_wait_project(folder: Path) -> bool:
    """True for a folder whose `pyproject.toml` is agent-wait's own (this repository's checkout)."""
    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8")).get("project")
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return isinstance(project, dict) and _name(str(project.get("name", ""))) == "agent-wait"


def _uv_export(lock: Path) -> str:
    """`uv export` run in the lock's folder: the locked closure, without the project itself and dev groups."""
    uv = shutil.which("uv")
    if uv is None:
        raise BundleError(
            f"found {lock} for the Lambda dependencies, but uv is not on PATH to export it; install uv "
            "(pip install uv), or export the requirements yourself (uv export --frozen --no-dev --no-hashes "
            "--no-emit-project > requirements.txt) and pass requirements_file="
        )
    command = [uv, *UV_EXPORT]
    result = subprocess.run(command, cwd=lock.parent, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-10:])
        raise BundleError(
            f"exporting {lock} failed (exit {result.returncode}): uv {' '.join(UV_EXPORT)} in {lock.parent}\n"
            f"{tail}\nRun `uv lock` if pyproject.toml changed since the lock was written, or pass requirements_file="
        )
    return result.stdout


def _project_dependencies(pyproject: Path) -> str | None:
    """`[project] dependencies`, one per line; None when the file has no `[project]` table."""
    try:
        data = tomllib.loads(_read(pyproject))
    except tomllib.TOMLDecodeError as exc:
        raise BundleError(
            f"{pyproject} is not valid TOML ({exc}); fix it, or pass requirements_file= to name the "
            "Lambda dependencies yourself"
        ) from None
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    if "dependencies" in (project.get("dynamic") or ()):
        raise BundleError(
            f"{pyproject} declares its [project] dependencies dynamic, which cannot be read without building "
            "the project; list them in a requirements.txt beside it, or pass requirements_file="
        )
    declared = project.get("dependencies", [])
    if not isinstance(declared, list) or not all(isinstance(item, str) for item in declared):
        raise BundleError(
            f"{pyproject}: [project] dependencies must be a list of requirement strings (PEP 621), "
            f'such as ["langchain-openai>=0.3"]; got {declared!r}'
        )
    return "".join(f"{item}\n" for item in declared)
