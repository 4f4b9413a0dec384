"""`LambdaBundle`: what goes into the functions' code asset, its hash, and how it is built.

The asset holds three things at its root: the pinned dependencies installed for the Lambda platform
(`install`), the runtime package `agent_wait`, and the user's graph source (each path copied under its own
name, so `examples/` makes `examples.refund_agent.graph` importable); then it is pruned (`prune`), its heavy
package inits made lazy and its bytecode compiled (`lazy_init`), and its size checked against Lambda's limit.

The asset hash is computed before bundling from everything that decides the bundle's content: the
requirements text (a found file's, as read or exported), how it is installed, the Python version, the
platform, and every file of the runtime and the graph source. A dependency that changes therefore changes
the hash, and a deploy really ships new code; an unchanged tree re-uses the bundle already in `cdk.out`.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import Annotations, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_wait_cdk.bundling import install as installer
from agent_wait_cdk.bundling.errors import BundleError
from agent_wait_cdk.bundling.install import LAMBDA_PYTHON_VERSION
from agent_wait_cdk.bundling.lazy_init import LAZY_PACKAGES, compile_bytecode, find_lambda_python, lazy_package_init
from agent_wait_cdk.bundling.prune import prune_bundle, strip_debug_sections, tree_size
from agent_wait_cdk.bundling.requirements import bundle_requirements
from agent_wait_cdk.bundling.slim import left_out, slim_bundle

__all__ = (
    "BUNDLE_CONTEXT",
    "MAX_BUNDLE_BYTES",
    "LambdaBundle",
    "check_size",
    "find_graph_module",
    "find_runtime_source",
    "warn_if_graph_missing",
)

BUNDLE_CONTEXT = "agent-wait:bundle"
"""Context key: `cdk synth -c agent-wait:bundle=false` synthesizes without building the bundle, in any app."""
MAX_BUNDLE_BYTES = 262_144_000
"""Lambda's limit for a function's code, unzipped (250 MB)."""

_FORMAT = "agent-wait-bundle/2"
"""Bumped when the bundle's layout changes, so old bundles are not re-used."""
_SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "cdk.out", ".venv", ".git"})


def find_runtime_source() -> Path:
    """The `agent_wait` package directory to bundle, found without importing it.

    In a checkout of this repository it is `runtime/agent_wait` beside `constructs/`; when agent-wait is
    installed, it is wherever the import system would find `agent_wait`.
    """
    checkout = Path(__file__).resolve().parents[3] / "runtime" / "agent_wait"
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
        leaves_out: what this function's asset leaves out of the install (`for_function`, `slim.left_out`);
            empty: the whole install, every function's.
    """

    architecture: str
    requirements: str
    sources: tuple[tuple[Path, str], ...]
    origin: str = "the requirements given"
    resolve: bool = False
    aws_services: tuple[str, ...] = ()
    bytecode_python: str | None = None
    leaves_out: tuple[str, ...] = ()

    @classmethod
    def for_architecture(
        cls,
        architecture: lambda_.Architecture,
        *,
        graph_source: Sequence[str | os.PathLike[str]] = (),
        runtime_source: str | os.PathLike[str] | None = None,
        requirements_file: str | os.PathLike[str] | None = None,
        aws_services: Sequence[str] = (),
        graph: str | None = None,
    ) -> LambdaBundle:
        """Plan a bundle; raises `BundleError` for a missing path, an unknown architecture, a name clash, or
        requirements that cannot be read.

        Without `requirements_file`, the requirements are found (`find_dependencies`) in the folder of
        `graph`'s module (`module:attribute`, when a graph source holds it), each graph source folder (a
        file's own folder), then the working directory, passing over the CDK app's own files (they name
        `aws-cdk-lib`); a found file is completed with the runtime's pins for every package it does not
        name. None found: the runtime's pins. `aws_services`: botocore models to keep besides those the
        bundle's code names (see the module docstring).
        """
        name = architecture.name
        services = tuple(sorted(set(aws_services)))
        compiler = find_lambda_python()
        if name not in installer.ARCHITECTURES:
            raise BundleError(f"architecture must be one of {list(installer.ARCHITECTURES)}; got {name!r}")
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

        folders = [path if path.is_dir() else path.parent for path, _ in sources[1:]]
        module = find_graph_module(graph, sources[1:]) if graph else None
        if module is not None:
            folders.insert(0, module.parent)
        dependencies = bundle_requirements(folders, requirements_file)
        return cls(
            name,
            dependencies.requirements,
            tuple(sources),
            origin=dependencies.origin,
            resolve=dependencies.resolve,
            aws_services=services,
            bytecode_python=compiler,
        )

    def for_function(self, function: str, *, channels: Iterable[str] = ()) -> LambdaBundle:
        """This bundle for one function (`router`, `sweep`, `api`): its asset leaves out the libraries only another
        function, or a channel not in `channels` (`slack`, `email`, `shaped`, `teams`), imports (`slim`). The router
        and the sweep need the same, so they share one asset.

        Raises:
            BundleError: `function` is not one of them.
        """
        try:
            leaves_out = left_out(function, channels)
        except ValueError as exc:
            raise BundleError(str(exc)) from None
        return replace(self, leaves_out=leaves_out)

    @property
    def platform(self) -> str:
        """The uv platform (`x86_64-manylinux_2_34` or `aarch64-manylinux_2_34`)."""
        return installer.platform(self.architecture)

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
        if self.leaves_out:  # a function's asset (a whole install hashes as it always did)
            digest.update(("leaves out:" + ",".join(self.leaves_out)).encode())
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
        """The installer command line (`install.install_command`): uv when it is on PATH, else pip from this
        interpreter; `--no-deps` unless `resolve`. `python_version` is for benches on a machine without the
        Lambda runtime's Python; a deployed bundle never sets it."""
        return installer.install_command(
            self.architecture, target, requirements, resolve=self.resolve, python_version=python_version
        )

    def build(self, output_dir: Path, *, python_version: str = LAMBDA_PYTHON_VERSION) -> None:
        """Install the requirements, copy the sources into `output_dir` and prune the dependencies; raises
        `BundleError` on failure. `python_version`: see `install_command` (never set for a deployed bundle).

        A function's bundle (`for_function`) is the whole install, built once per process and `python_version` in a
        scratch folder, copied into `output_dir` (hard links where it can) and slimmed there: a stack's second asset
        costs a copy, not a second install.
        """
        if not self.leaves_out:
            self._build_whole(output_dir, python_version=python_version)
            return
        whole = _whole_installs.get((self.whole().asset_hash(), python_version))
        if whole is None or not whole.is_dir():
            whole = Path(tempfile.mkdtemp(prefix="agent-wait-bundle-")) / "whole"
            atexit.register(shutil.rmtree, whole.parent, True)
            self.whole()._build_whole(whole, python_version=python_version)
            _whole_installs[(self.whole().asset_hash(), python_version)] = whole
        _copy_tree(whole, output_dir)
        graph_sources = [dest for _, dest in self.sources[1:]]
        slim_bundle(output_dir, self.leaves_out, graph_sources=graph_sources, requirements=self.requirements)
        check_size(output_dir, origin=self.origin)

    def whole(self) -> LambdaBundle:
        """This bundle for every function: the whole install, leaving nothing out."""
        return replace(self, leaves_out=())

    def _build_whole(self, output_dir: Path, *, python_version: str) -> None:
        installer.install(
            self.architecture,
            self.requirements,
            output_dir,
            resolve=self.resolve,
            python_version=python_version,
            origin=self.origin,
        )
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
        check_size(output_dir, origin=self.origin)


_whole_installs: dict[tuple[str, str], Path] = {}
"""The whole install of each bundle built in this process (by its hash and Python version), which each function's
asset copies."""


def _copy_tree(source: Path, target: Path) -> None:
    """Copy `source` into `target` (which may exist), hard-linking each file where the file system allows: the copy is
    only ever slimmed (files deleted), never written in place."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link, dirs_exist_ok=True)


def check_size(bundle_dir: Path, limit: int = MAX_BUNDLE_BYTES, *, origin: str | None = None) -> None:
    """Raise `BundleError` naming the five largest entries when the bundle is over Lambda's unzipped limit, and
    `origin`, where the bundle's requirements came from (`LambdaBundle.origin`)."""
    sizes = {entry.name: tree_size(entry) for entry in bundle_dir.iterdir()}
    total = sum(sizes.values())
    if total <= limit:
        return
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    named = ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in largest)
    raise BundleError(
        f"the Lambda bundle is {total / 1e6:.0f} MB unzipped; Lambda allows {limit / 1e6:.0f} MB. The largest: "
        f"{named}. Drop what the graph does not import from requirements_file, or move it to a layer"
        + (f". The bundle's requirements: {origin}." if origin else "")
    )


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


def find_graph_module(graph: str, sources: Sequence[tuple[Path, str]]) -> Path | None:
    """The file of `graph`'s module (`module:attribute`) in the graph sources ((path, name in the asset)), or
    None when none holds it."""
    module = graph.split(":", 1)[0].split(".")
    for source, dest in sources:
        if source.is_file():
            if [dest.removesuffix(".py")] == module:
                return source
            continue
        if module[0] != dest:
            continue
        base = Path(source, *module[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def warn_if_graph_missing(scope: Construct, graph: str, bundle: LambdaBundle) -> None:
    """Warn at synth time when no graph source holds the graph's module (the router could not import it)."""
    if len(bundle.sources) == 1:
        return  # no graph_source: the module may come from requirements_file
    if find_graph_module(graph, bundle.sources[1:]) is not None:
        return
    module = graph.split(":", 1)[0]
    Annotations.of(scope).add_warning_v2(
        "agent-wait:graph-not-found",
        f"graph module {module!r} is not in graph_source; the router will fail to import it",
    )
