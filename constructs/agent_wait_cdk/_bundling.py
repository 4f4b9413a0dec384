"""Lambda code for the router and the sweep, bundled on the host without Docker.

The asset holds three things at its root: the pinned dependencies installed for the Lambda platform
(`uv pip install --python-platform <arch>-manylinux_2_34 --python-version 3.13 --only-binary :all:`, or
pip with `--platform`/`--implementation cp` when uv is not on PATH), the runtime package `agent_wait`,
and the user's graph source (each path copied under its own name, so `examples/` makes
`examples.refund_agent.graph` importable).

The requirements are `requirements_file` when given (a complete pinned closure, installed as it is with
`--no-deps`). Without it they are found the way `PythonFunction` users expect (`find_dependencies`): in each
graph source folder, then the working directory, the first of `requirements.txt`, `uv.lock` (exported with
`uv export`) and `pyproject.toml` (its `[project] dependencies`). A found file is installed with its
dependencies resolved, on top of the runtime's own pins for every package it does not name. When none is
found, the runtime's own pins are installed as they are.

Compiled libraries ship without their debug sections: each `*.so` is passed through `strip --strip-debug`
when binutils' `strip` is on PATH (a library it cannot read, one built for another architecture, is left as
it is). Some wheels ship with their debug sections (zstandard's for Python 3.11: 11.6 MB, 1.0 MB stripped);
the Lambda wheels of today's pins come stripped already, and the refund bundle is 58.9 MB unzipped either way.

Then what the functions never read is dropped (`prune_bundle`), each kind for a reason written beside it in
`PRUNED`: test suites, type stubs, C sources, botocore's request examples, Swagger UI's assets, and the botocore
service models of services nothing in the bundle names. A model is kept for every service in
`RUNTIME_AWS_SERVICES` (what agent-wait's handlers call), for every service named in a string literal of any
Python file in the bundle (the graph source and its dependencies included: `boto3.client("bedrock-runtime")`
in a graph, or in a package such as langchain-aws, keeps `bedrock-runtime`), and for each of the bundle's
`aws_services`. A graph that computes a service's name at run time (`boto3.client(name)`) names it in
`aws_services`, or anywhere in its source as a literal; otherwise its client fails with botocore's
`UnknownServiceError`. The refund bundle: 58.9 MB before, 42.4 MB after (13.6 MB of it botocore models).

Packages whose `__init__` imports every module they have are made lazy (`LAZY_PACKAGES`): the router imports
`DynamoDBSaver` from langgraph-checkpoint-aws, whose `__init__` also imports its AgentCore, Bedrock session and
store modules (and Powertools' `data_classes` imports some forty event classes for the batch processor's one).
In the bundle, such an `__init__` is kept as `_agent_wait_eager.py` and a generated one imports each name on
first use (PEP 562), so the saver comes without the rest; every other name (and the Valkey fallbacks) still
resolves, through the package's own code. Importing `langgraph_checkpoint_aws.checkpoint.dynamodb` directly
would not help: a package's `__init__` always runs before its submodules.

Python 3.13 bytecode ships when this machine has a Python 3.13 (`python3.13` on PATH, or pyenv's): every module
is compiled with `compileall --invalidation-mode unchecked-hash` (a Lambda's /var/task is read-only, so without
it each cold start compiles every module it imports: the refund router was ready in 1.2 s with bytecode, 3.0 s
without). The refund bundle is then 67 MB unzipped. Without a Python 3.13 (`uv python install` downloads it
from GitHub), no bytecode ships and the bundle still works, only its cold start is slower; whether bytecode
ships is part of the asset hash.

The asset hash is computed before bundling from everything that decides the bundle's content: the
requirements text (a found file's, as read or exported), how it is installed, the Python version, the
platform, and every file of the runtime and the graph source. A dependency that changes therefore changes
the hash, and a deploy really ships new code; an unchanged tree re-uses the bundle already in `cdk.out`.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import Annotations, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

__all__ = (
    "BUNDLE_CONTEXT",
    "DEPENDENCY_FILES",
    "LAMBDA_PYTHON_VERSION",
    "LAZY_PACKAGES",
    "MAX_BUNDLE_BYTES",
    "PRUNED",
    "REQUIREMENTS_FILE",
    "RUNTIME_AWS_SERVICES",
    "UV_EXPORT",
    "BundleError",
    "Dependencies",
    "LambdaBundle",
    "Pruned",
    "compile_bytecode",
    "find_dependencies",
    "find_lambda_python",
    "find_runtime_source",
    "lazy_package_init",
    "prune_bundle",
)

LAMBDA_PYTHON_VERSION = "3.13"
"""The Lambda runtime the bundle targets (`python3.13`)."""
REQUIREMENTS_FILE = Path(__file__).with_name("requirements-lambda.txt")
"""The runtime's pinned `host` dependencies, exported from uv.lock:
`uv export --frozen --no-dev --extra langgraph-host --no-hashes --no-emit-project`. A test fails when they drift."""

DEPENDENCY_FILES = ("requirements.txt", "uv.lock", "pyproject.toml")
"""What is looked for, in this order in each folder, when no `requirements_file` is given."""
UV_EXPORT = ("export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project")
"""The `uv` arguments that turn a found `uv.lock` into requirements (run in the lock's folder)."""

BUNDLE_CONTEXT = "agent-wait:bundle"
"""Context key: `cdk synth -c agent-wait:bundle=false` synthesizes without building the bundle, in any app."""
MAX_BUNDLE_BYTES = 262_144_000
"""Lambda's limit for a function's code, unzipped (250 MB)."""

RUNTIME_AWS_SERVICES = frozenset({"dynamodb", "events", "s3", "secretsmanager", "sns", "sqs", "sts"})
"""The botocore service models every bundle keeps: the services agent-wait's router, sweep and answer API make
clients for (ledger and checkpoints, EventBridge and SNS announcers, webhook and link-key secrets, checkpoint
offload, the queues), and STS, which botocore's assume-role and web-identity credential providers call."""


@dataclass(frozen=True)
class Pruned:
    """One kind of file the bundle drops, and why no function reads it.

    Attributes:
        pattern: a glob relative to the bundle's root, matched against each path (`fnmatch`, where `*` also
            crosses `/`); a matching directory goes whole.
        reason: why nothing in Lambda reads it.
    """

    pattern: str
    reason: str


PRUNED: tuple[Pruned, ...] = (
    Pruned("*/tests", "test suites shipped inside wheels (jsonschema, referencing, certifi): pytest runs them, "
           "nothing imports them"),
    Pruned("*.pyi", "type stubs: read by type checkers, never by the interpreter"),
    Pruned("*-stubs", "stub-only packages (wrapt-stubs, jsonpatch-stubs): type checkers' input, never imported"),
    Pruned("*.c", "C sources shipped beside their compiled module (wrapt, websockets): the .so is what loads"),
    Pruned("botocore/data/*/*/examples-1.json", "request examples for botocore's generated documentation "
           "(botocore.docs); clients never read them"),
    Pruned("aws_lambda_powertools/event_handler/openapi/swagger_ui/*.min.*", "Swagger UI's script and style, "
           "served only by enable_swagger(), which agent-wait's answer API never calls"),
)  # fmt: skip
"""What `prune_bundle` drops from the installed dependencies (never from the runtime or the graph source), besides
the botocore models of services nothing names (see the module docstring)."""

LAZY_PACKAGES = ("langgraph_checkpoint_aws", "aws_lambda_powertools.utilities.data_classes")
"""Packages whose `__init__` the bundle makes lazy (`lazy_package_init`), each because it imports every module it
has to export their names while the functions use one or two: langgraph-checkpoint-aws's imports its AgentCore,
Bedrock session and store modules (and tries Valkey's), and the router needs only `DynamoDBSaver`; Powertools'
`data_classes` imports a class for each of some forty event sources, and the batch processor needs SQS's."""

_FORMAT = "agent-wait-bundle/2"
"""Bumped when the bundle's layout changes, so old bundles are not re-used."""
_GLIBC = "2_34"
"""Lambda's python3.13 runs on Amazon Linux 2023 (glibc 2.34): wheels up to manylinux_2_34 load there."""
_MACHINES = {"x86_64": "x86_64", "arm64": "aarch64"}
_SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "cdk.out", ".venv", ".git"})
_EAGER_INIT = "_agent_wait_eager"
"""The name a lazy package's own `__init__` is kept under in the bundle."""
_SERVICE_NAME = re.compile(r"""["']([a-z0-9][a-z0-9-]*)["']""")
"""A quoted lower-case word: the form a botocore service name takes in `boto3.client("...")`."""


class BundleError(RuntimeError):
    """Raised when the Lambda bundle cannot be planned (a missing source) or built (the installer failed)."""


def find_runtime_source() -> Path:
    """The `agent_wait` package directory to bundle, found without importing it.

    In a checkout of this repository it is `runtime/agent_wait` beside `constructs/`; when agent-wait is
    installed, it is wherever the import system would find `agent_wait`.
    """
    checkout = Path(__file__).resolve().parents[2] / "runtime" / "agent_wait"
    if (checkout / "__init__.py").is_file():
        return checkout
    spec = importlib.util.find_spec("agent_wait")  # locates, does not execute
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    raise BundleError(
        "cannot find the agent_wait runtime package to bundle; install it (pip install 'agent-wait[host]') "
        "or pass runtime_source= with the path of the agent_wait directory"
    )


@dataclass(frozen=True)
class Dependencies:
    """The requirements a bundle installs, and where they came from.

    Attributes:
        requirements: the requirements text, without a line for agent-wait itself.
        origin: where they came from, in words; `AgentWait` says it in the synth output.
        resolve: True to install them with their dependencies resolved for the Lambda platform (a found
            file, PythonFunction's way); False to install them as they are (`--no-deps`), a complete closure.
    """

    requirements: str
    origin: str
    resolve: bool = False


def find_dependencies(folders: Sequence[str | os.PathLike[str]]) -> Dependencies | None:
    """The first of `DEPENDENCY_FILES` found, folder by folder; None when no folder holds one.

    In each folder, `requirements.txt` is read as it is; else `uv.lock` is exported with `uv export
    --frozen --no-dev --no-hashes --no-emit-project` (uv must be on PATH); else `pyproject.toml`'s
    `[project] dependencies` are read (a `pyproject.toml` without a `[project]` table declares none, and
    the search goes on). A folder that is agent-wait's own project (a checkout of this repository) is
    skipped: its dependencies are the runtime's pins already. A line for agent-wait itself is dropped from
    every source. The result is `resolve=True`.

    Example:
        found = find_dependencies([Path("src/my_agent"), Path.cwd()])

    Raises:
        BundleError: the file found cannot be read: a malformed `pyproject.toml`, dynamic or malformed
            `[project] dependencies`, a `uv.lock` with no uv on PATH, or `uv export` failing.
    """
    for folder in dict.fromkeys(Path(entry).resolve() for entry in folders):
        if _is_agent_wait_project(folder):
            continue
        requirements = folder / "requirements.txt"
        if requirements.is_file():
            return Dependencies(_without_self(_read(requirements)), str(requirements), resolve=True)
        lock = folder / "uv.lock"
        if lock.is_file():
            origin = f"{lock}, exported with: uv {' '.join(UV_EXPORT)}"
            return Dependencies(_without_self(_uv_export(lock)), origin, resolve=True)
        pyproject = folder / "pyproject.toml"
        declared = _project_dependencies(pyproject) if pyproject.is_file() else None
        if declared is not None:
            return Dependencies(_without_self(declared), f"{pyproject} [project] dependencies", resolve=True)
    return None


@dataclass(frozen=True)
class LambdaBundle:
    """What goes into the functions' code asset, and how to build it.

    Example:
        bundle = LambdaBundle.for_architecture(lambda_.Architecture.ARM_64, graph_source=["examples"])
        code = bundle.code()  # one asset, shared by the router and the sweep

    Attributes:
        architecture: `x86_64` or `arm64` (the Lambda architecture name).
        requirements: the requirements text installed into the asset.
        sources: (path on this machine, name in the asset) for the runtime package and each graph source.
        origin: where the requirements came from, in words (`AgentWait` says it in the synth output).
        resolve: install with dependency resolution (found requirements) rather than as they are (`--no-deps`).
        aws_services: botocore service names whose models the bundle keeps besides `RUNTIME_AWS_SERVICES` and
            those its Python files name (for a graph that computes a client's service name).
        bytecode_python: the Python 3.13 interpreter that compiles the bundle's bytecode; None: no bytecode.
    """

    architecture: str
    requirements: str
    sources: tuple[tuple[Path, str], ...]
    origin: str = "the requirements given"
    resolve: bool = False
    aws_services: tuple[str, ...] = ()
    bytecode_python: str | None = None

    @classmethod
    def for_architecture(
        cls,
        architecture: lambda_.Architecture,
        *,
        graph_source: Sequence[str | os.PathLike[str]] = (),
        runtime_source: str | os.PathLike[str] | None = None,
        requirements_file: str | os.PathLike[str] | None = None,
        aws_services: Sequence[str] = (),
    ) -> LambdaBundle:
        """Plan a bundle; raises `BundleError` for a missing path, an unknown architecture, a name clash, or
        requirements that cannot be read.

        Without `requirements_file`, the requirements are found (`find_dependencies`) in each graph source
        folder (a file's own folder), then the working directory; a found file is completed with the
        runtime's pins for every package it does not name. None found: the runtime's pins. `aws_services`:
        botocore models to keep besides those the bundle's code names (see the module docstring).
        """
        name = architecture.name
        services = tuple(sorted(set(aws_services)))
        compiler = find_lambda_python()
        if name not in _MACHINES:
            raise BundleError(f"architecture must be one of {sorted(_MACHINES)}; got {name!r}")
        runtime = Path(runtime_source) if runtime_source is not None else find_runtime_source()
        sources = [(runtime.resolve(), "agent_wait")]
        for entry in graph_source:
            path = Path(entry).resolve()
            if not path.exists():
                raise BundleError(f"graph_source {str(entry)!r} does not exist (resolved to {path})")
            sources.append((path, path.name))
        names = [dest for _, dest in sources]
        clashes = sorted({dest for dest in names if names.count(dest) > 1})
        if clashes:
            raise BundleError(f"graph_source entries must have distinct names, other than agent_wait; clash: {clashes}")

        def bundle(requirements: str, origin: str, *, resolve: bool = False) -> LambdaBundle:
            return cls(
                name,
                requirements,
                tuple(sources),
                origin=origin,
                resolve=resolve,
                aws_services=services,
                bytecode_python=compiler,
            )

        if requirements_file is not None:
            path = Path(requirements_file)
            given = _read(path, field="requirements_file")
            return bundle(_without_self(given), f"requirements_file {path}, installed as it is (--no-deps)")
        folders = [path if path.is_dir() else path.parent for path, _ in sources[1:]] + [Path.cwd()]
        pins = _read(REQUIREMENTS_FILE, field="requirements_file")
        found = find_dependencies(folders)
        if found is None:
            searched = ", ".join(str(folder) for folder in dict.fromkeys(f.resolve() for f in folders))
            origin = (
                f"the runtime's pins ({REQUIREMENTS_FILE.name}): none of {', '.join(DEPENDENCY_FILES)} in {searched}"
            )
            return bundle(_without_self(pins), origin)
        origin = f"{found.origin}, resolved on top of the runtime's pins for what it does not name"
        return bundle(_completed(found.requirements, pins), origin, resolve=True)

    @property
    def platform(self) -> str:
        """The uv platform (`x86_64-manylinux_2_34` or `aarch64-manylinux_2_34`)."""
        return f"{_MACHINES[self.architecture]}-manylinux_{_GLIBC}"

    def asset_hash(self) -> str:
        """sha256 over the format, Python version, platform, install mode, requirements, the AWS services kept
        by name, whether bytecode ships, and every source file."""
        digest = hashlib.sha256()
        mode = "resolve" if self.resolve else "no-deps"
        services = ",".join(self.aws_services)
        bytecode = "bytecode" if self.bytecode_python else "source"
        for part in (_FORMAT, LAMBDA_PYTHON_VERSION, self.platform, mode, self.requirements, services, bytecode):
            digest.update(part.encode())
            digest.update(b"\0")
        for source, dest in self.sources:
            for file in _files(source):
                rel = file.relative_to(source).as_posix() if source.is_dir() else ""
                digest.update(f"{dest}/{rel}".encode())
                digest.update(b"\0")
                digest.update(hashlib.sha256(file.read_bytes()).digest())
        return digest.hexdigest()

    def code(self, *, bundled: bool = True) -> lambda_.AssetCode:
        """A Lambda asset that bundles locally; Docker is never used.

        Args:
            bundled: False gives the same asset hash without building anything (`agent-wait:bundle=false`):
                a placeholder for synthesizing and testing, never for deploying.
        """
        runtime_dir = self.sources[0][0]
        if not bundled:
            return lambda_.Code.from_asset(str(runtime_dir), asset_hash=self.asset_hash())
        return lambda_.Code.from_asset(
            str(runtime_dir),
            asset_hash=self.asset_hash(),
            bundling=BundlingOptions(
                # Required by the type; never pulled or run, because local bundling always succeeds or raises.
                image=DockerImage.from_registry("agent-wait/no-docker"),
                local=_LocalBundler(self),
            ),
        )

    def install_command(
        self, target: Path, requirements: Path, *, python_version: str = LAMBDA_PYTHON_VERSION
    ) -> list[str]:
        """The installer command line: uv when it is on PATH, else pip from this interpreter.

        `--no-deps` unless `resolve`: a complete closure is installed as it is; found requirements are
        resolved for the Lambda platform, as pip resolves a `requirements.txt`. `python_version` is for
        benches on a machine without the Lambda runtime's Python; a deployed bundle never sets it.
        """
        no_deps = [] if self.resolve else ["--no-deps"]
        uv = shutil.which("uv")
        if uv:
            return [
                uv, "pip", "install", "--quiet", *no_deps, "--only-binary", ":all:",
                "--python-platform", self.platform, "--python-version", python_version,
                "--target", str(target), "-r", str(requirements),
            ]  # fmt: skip
        pip_platform = f"manylinux_{_GLIBC}_{_MACHINES[self.architecture]}"
        return [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
            *no_deps, "--only-binary=:all:", "--platform", pip_platform, "--implementation", "cp",
            "--python-version", python_version, "--target", str(target), "-r", str(requirements),
        ]  # fmt: skip

    def build(self, output_dir: Path, *, python_version: str = LAMBDA_PYTHON_VERSION) -> None:
        """Install the requirements, copy the sources into `output_dir` and prune the dependencies; raises
        `BundleError` on failure. `python_version`: see `install_command` (never set for a deployed bundle)."""
        with tempfile.TemporaryDirectory(prefix="agent-wait-bundle-") as tmp:
            requirements = Path(tmp) / "requirements.txt"
            requirements.write_text(self.requirements, encoding="utf-8")
            command = self.install_command(output_dir, requirements, python_version=python_version)
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
            raise BundleError(
                f"installing the Lambda dependencies failed (exit {result.returncode}): {' '.join(command)}\n{tail}\n"
                "The bundle needs PyPI or a warm uv/pip cache. To synthesize without bundling, "
                "run: cdk synth -c agent-wait:bundle=false"
            )
        shutil.rmtree(output_dir / "bin", ignore_errors=True)  # console scripts: useless in Lambda
        strip_debug_sections(output_dir)
        for source, dest in self.sources:
            target = output_dir / dest
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns(*_SKIPPED, "*.pyc"), dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)
        prune_bundle(output_dir, keep=frozenset(dest for _, dest in self.sources), aws_services=self.aws_services)
        for package in LAZY_PACKAGES:
            lazy_package_init(output_dir.joinpath(*package.split(".")), package)
        if self.bytecode_python and python_version == LAMBDA_PYTHON_VERSION:
            compile_bytecode(output_dir, self.bytecode_python)
        check_size(output_dir)


def strip_debug_sections(bundle_dir: Path) -> int:
    """Remove debug sections from every compiled library under `bundle_dir`; returns the bytes saved.

    Only `--strip-debug`: symbols a library exports or needs stay, so every import works as before. Without
    `strip` on PATH nothing changes; a library `strip` cannot read is left as it is.
    """
    strip = shutil.which("strip")
    if strip is None:
        return 0
    saved = 0
    for library in sorted(bundle_dir.rglob("*.so*")):
        if not library.is_file() or library.is_symlink():
            continue
        # Into a new file, then renamed over: the installer may have hard-linked the library from its cache,
        # and that same file is loaded by other environments right now; writing it in place would change
        # (and can crash) every one of them.
        stripped = library.with_name(library.name + ".stripped")
        result = subprocess.run(
            [strip, "--strip-debug", "--preserve-dates", "-o", str(stripped), str(library)],
            capture_output=True,
            check=False,
        )
        if result.returncode == 0 and stripped.stat().st_size < library.stat().st_size:
            saved += library.stat().st_size - stripped.stat().st_size
            stripped.chmod(library.stat().st_mode)
            os.replace(stripped, library)
        else:
            stripped.unlink(missing_ok=True)
    return saved


@functools.cache
def find_lambda_python() -> str | None:
    """A Python 3.13 (the Lambda runtime's version) on this machine: `python3.13` on PATH, else pyenv's; or None.

    Looked for once per process (every `AgentWait` plans a bundle)."""
    name = f"python{LAMBDA_PYTHON_VERSION}"
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{LAMBDA_PYTHON_VERSION}.*/bin/{name}"), reverse=True)
    for candidate in filter(None, [shutil.which(name), *map(str, pyenv)]):
        try:
            probe = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0 and probe.stdout.startswith(f"Python {LAMBDA_PYTHON_VERSION}."):
            return candidate
    return None


def compile_bytecode(bundle_dir: Path, python: str) -> None:
    """Compile every module in the bundle with `python` (3.13), as `unchecked-hash` pycs; raises `BundleError`.

    Unchecked: Lambda loads them without reading the source's timestamp or hash (the zip's timestamps are not
    the build's); the bundle is rebuilt, never edited, whenever a source changes.
    """
    command = [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(bundle_dir)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BundleError(f"compiling the bundle's bytecode failed: cannot run {python} ({exc.strerror})") from None
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-10:])
        raise BundleError(
            f"compiling the bundle's bytecode failed (exit {result.returncode}): {' '.join(command)}\n{tail}"
        )


def prune_bundle(
    bundle_dir: Path, *, keep: frozenset[str] = frozenset(), aws_services: Sequence[str] = ()
) -> dict[str, int]:
    """Drop what no function reads from an installed bundle; returns the bytes dropped, by reason.

    Every `PRUNED` pattern, then each `botocore/data/<service>` whose service is not kept: a service is kept
    when it is in `RUNTIME_AWS_SERVICES` or `aws_services`, or named in a string literal of any Python file in
    the bundle outside botocore and boto3 themselves (the top-level entries in `keep` included). Nothing under
    a top-level entry named in `keep` (the runtime and the graph source) is dropped.
    """
    dropped: dict[str, int] = {}

    def drop(path: Path, reason: str) -> None:
        dropped[reason] = dropped.get(reason, 0) + _remove(path)

    models = bundle_dir / "botocore" / "data"
    if models.is_dir():  # first, so that the walk below need not visit them
        kept = set(RUNTIME_AWS_SERVICES) | set(aws_services) | _named_services(bundle_dir, models)
        for service in sorted(models.iterdir()):
            if service.is_dir() and service.name not in kept:
                drop(service, "botocore models of AWS services nothing in the bundle names")
    rules = [(re.compile(fnmatch.translate(rule.pattern)), rule.reason) for rule in PRUNED]
    for root, dirs, files in os.walk(bundle_dir):
        here = Path(root)
        rel = here.relative_to(bundle_dir).as_posix()
        prefix = "" if rel == "." else rel + "/"
        if not prefix:  # the runtime and the graph source are never pruned
            dirs[:] = [name for name in dirs if name not in keep]
        for names, is_dir in ((dirs, True), ([name for name in files if prefix or name not in keep], False)):
            for name in list(names):
                reason = next((reason for pattern, reason in rules if pattern.match(prefix + name)), None)
                if reason is not None and not (here / name).is_symlink():
                    drop(here / name, reason)
                    if is_dir:
                        dirs.remove(name)
    return dropped


def _named_services(bundle_dir: Path, models: Path) -> set[str]:
    """The botocore services named in a string literal of any Python file outside botocore and boto3."""
    services = {entry.name for entry in models.iterdir() if entry.is_dir()}
    named: set[str] = set()
    for file in bundle_dir.rglob("*.py"):
        if file.relative_to(bundle_dir).parts[0] in ("botocore", "boto3"):
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        named.update(word for word in _SERVICE_NAME.findall(text) if word in services)
    return named


def _remove(path: Path) -> int:
    """Delete a file or a directory tree; returns the bytes it held."""
    size = _size(path)
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    return size


def lazy_package_init(package_dir: Path, package: str | None = None) -> bool:
    """Make a package's `__init__` import each name on first use; True when it was rewritten.

    `package` is its dotted name (default: the folder's name), against which relative imports resolve.

    The `__init__` is kept as `_agent_wait_eager.py` in the same package, and a generated one maps each name
    the original imports unconditionally at top level (`from module import Name`) to its module, imported when
    the name is first read (PEP 562 `__getattr__`). Any other name (one bound in a `try`, a submodule) is read
    from the kept `__init__`, which then runs as it was written. An `__init__` that does anything but import,
    bind `__all__` and try imports is left as it is (False), as is a package that is not there.
    """
    init = package_dir / "__init__.py"
    if not init.is_file() or (package_dir / f"{_EAGER_INIT}.py").exists():
        return False
    tree = ast.parse(init.read_text(encoding="utf-8"))
    name = package or package_dir.name
    lazy: dict[str, tuple[str, str]] = {}
    exported: list[str] | None = None
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.module and all(alias.name != "*" for alias in node.names):
            module = node.module if node.level == 0 else _absolute(name, node.module, node.level)
            for alias in node.names:
                lazy[alias.asname or alias.name] = (module, alias.name)
        elif isinstance(node, ast.Try) and all(_catches_import_error(handler) for handler in node.handlers):
            continue  # its names are read from the kept __init__ when asked for
        elif isinstance(node, ast.Assign) and [_target_name(target) for target in node.targets] == ["__all__"]:
            try:
                exported = [str(name) for name in ast.literal_eval(node.value)]
            except ValueError:
                return False
        else:
            return False
    if exported is None:
        return False
    docstring = (ast.get_docstring(tree) or package_dir.name).replace('"""', "'''")
    # A name its own submodule shares (`from .event_source import event_source`) is bound now: imported later,
    # that submodule would set the package's attribute to itself, and no __getattr__ would run for the name.
    now = {alias: target for alias, target in lazy.items() if target[0] == f"{name}.{alias}"}
    eager = "".join(f"from {module} import {attr} as {alias}\n" for alias, (module, attr) in sorted(now.items()))
    lazy = {alias: target for alias, target in lazy.items() if alias not in now}
    init.rename(package_dir / f"{_EAGER_INIT}.py")
    text = _LAZY_INIT.format(docstring=docstring, exported=exported, eager=eager, lazy=lazy)
    init.write_text(text, encoding="utf-8")
    return True


_LAZY_INIT = '''"""{docstring}

(Rewritten by agent-wait's Lambda bundler: each name is imported when first read. This package's own
`__init__` is `_agent_wait_eager.py`; a name not mapped below is read from it, so it runs as written.)
"""

import importlib as _importlib
from typing import Any as _Any

__all__ = {exported!r}
{eager}_LAZY = {lazy!r}


def __getattr__(name: str) -> _Any:
    target = _LAZY.get(name)
    if target is not None:
        value = getattr(_importlib.import_module(target[0]), target[1])
    else:
        eager = _importlib.import_module(__name__ + "._agent_wait_eager")
        if name in globals():  # a submodule the kept __init__ imported
            return globals()[name]
        if not hasattr(eager, name):
            raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")
        value = getattr(eager, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
'''
"""The generated `__init__` of a lazy package (`str.format` fields: docstring, exported, eager, lazy)."""


def _absolute(package: str, module: str, level: int) -> str:
    """`from .module import x` (level 1) in `package`'s `__init__` is `package.module`."""
    parts = package.split(".")
    return ".".join([*parts[: len(parts) - level + 1], module])


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    return isinstance(handler.type, ast.Name) and handler.type.id in ("ImportError", "ModuleNotFoundError")


def _target_name(target: ast.expr) -> str | None:
    return target.id if isinstance(target, ast.Name) else None


def check_size(bundle_dir: Path, limit: int = MAX_BUNDLE_BYTES) -> None:
    """Raise `BundleError` naming the five largest entries when the bundle is over Lambda's unzipped limit."""
    sizes = {entry.name: _size(entry) for entry in bundle_dir.iterdir()}
    total = sum(sizes.values())
    if total <= limit:
        return
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    named = ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in largest)
    raise BundleError(
        f"the Lambda bundle is {total / 1e6:.0f} MB unzipped; Lambda allows {limit / 1e6:.0f} MB. The largest: "
        f"{named}. Drop what the graph does not import from requirements_file, or move it to a layer"
    )


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


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


@jsii.implements(ILocalBundling)
class _LocalBundler:
    """CDK's local bundling hook: builds the bundle in the asset's output directory."""

    def __init__(self, bundle: LambdaBundle) -> None:
        self._bundle = bundle

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_options: Any) -> bool:
        self._bundle.build(Path(output_dir))
        return True


def _files(source: Path) -> Iterator[Path]:
    """Every file under `source` in a stable order, skipping caches and bytecode."""
    if source.is_file():
        yield source
        return
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
        for name in sorted(files):
            if not name.endswith(".pyc"):
                yield Path(root) / name


def warn_if_graph_missing(scope: Construct, graph: str, bundle: LambdaBundle) -> None:
    """Warn at synth time when no graph source holds the graph's module (the router could not import it)."""
    if len(bundle.sources) == 1:
        return  # no graph_source: the module may come from requirements_file
    module = graph.split(":", 1)[0].split(".")
    for source, dest in bundle.sources[1:]:
        if source.is_file():
            if [dest.removesuffix(".py")] == module:
                return
            continue
        if module[0] != dest:
            continue
        base = Path(source, *module[1:])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return
    Annotations.of(scope).add_warning_v2(
        "agent-wait:graph-not-found",
        f"graph module {'.'.join(module)!r} is not in graph_source; the router will fail to import it",
    )
