"""Lambda code for the router and the sweep, bundled on the host without Docker.

The asset holds three things at its root: the pinned dependencies installed for the Lambda platform
(`uv pip install --python-platform <arch>-manylinux_2_34 --python-version 3.13 --only-binary :all:`, or
pip with `--platform`/`--implementation cp` when uv is not on PATH), the runtime package `agent_wait`,
and the user's graph source (each path copied under its own name, so `examples/` makes
`examples.refund_agent.graph` importable).

The asset hash is computed before bundling from everything that decides the bundle's content: the
pinned requirements text, the Python version, the platform, and every file of the runtime and the graph
source. A dependency pin that changes therefore changes the hash, and a deploy really ships new code; an
unchanged tree re-uses the bundle already in `cdk.out`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

__all__ = (
    "BUNDLE_CONTEXT",
    "LAMBDA_PYTHON_VERSION",
    "MAX_BUNDLE_BYTES",
    "REQUIREMENTS_FILE",
    "BundleError",
    "LambdaBundle",
    "find_runtime_source",
)

LAMBDA_PYTHON_VERSION = "3.13"
"""The Lambda runtime the bundle targets (`python3.13`)."""
REQUIREMENTS_FILE = Path(__file__).with_name("requirements-lambda.txt")
"""The runtime's pinned `host` dependencies, exported from uv.lock:
`uv export --frozen --no-dev --extra host --no-hashes --no-emit-project`. A test fails when they drift."""

BUNDLE_CONTEXT = "agent-wait:bundle"
"""Context key: `cdk synth -c agent-wait:bundle=false` synthesizes without building the bundle, in any app."""
MAX_BUNDLE_BYTES = 262_144_000
"""Lambda's limit for a function's code, unzipped (250 MB)."""

_FORMAT = "agent-wait-bundle/1"
"""Bumped when the bundle's layout changes, so old bundles are not re-used."""
_GLIBC = "2_34"
"""Lambda's python3.13 runs on Amazon Linux 2023 (glibc 2.34): wheels up to manylinux_2_34 load there."""
_MACHINES = {"x86_64": "x86_64", "arm64": "aarch64"}
_SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "cdk.out", ".venv", ".git"})


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
class LambdaBundle:
    """What goes into the functions' code asset, and how to build it.

    Example:
        bundle = LambdaBundle.for_architecture(lambda_.Architecture.ARM_64, graph_source=["examples"])
        code = bundle.code()  # one asset, shared by the router and the sweep

    Attributes:
        architecture: `x86_64` or `arm64` (the Lambda architecture name).
        requirements: the pinned requirements text installed into the asset.
        sources: (path on this machine, name in the asset) for the runtime package and each graph source.
    """

    architecture: str
    requirements: str
    sources: tuple[tuple[Path, str], ...]

    @classmethod
    def for_architecture(
        cls,
        architecture: lambda_.Architecture,
        *,
        graph_source: Sequence[str | os.PathLike[str]] = (),
        runtime_source: str | os.PathLike[str] | None = None,
        requirements_file: str | os.PathLike[str] | None = None,
    ) -> LambdaBundle:
        """Plan a bundle; raises `BundleError` for a missing path, an unknown architecture or a name clash."""
        name = architecture.name
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
        req_path = Path(requirements_file) if requirements_file is not None else REQUIREMENTS_FILE
        try:
            text = req_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BundleError(f"requirements_file {str(req_path)!r} cannot be read ({exc.strerror})") from None
        return cls(architecture=name, requirements=_without_self(text), sources=tuple(sources))

    @property
    def platform(self) -> str:
        """The uv platform (`x86_64-manylinux_2_34` or `aarch64-manylinux_2_34`)."""
        return f"{_MACHINES[self.architecture]}-manylinux_{_GLIBC}"

    def asset_hash(self) -> str:
        """sha256 over the format, Python version, platform, requirements text and every source file."""
        digest = hashlib.sha256()
        for part in (_FORMAT, LAMBDA_PYTHON_VERSION, self.platform, self.requirements):
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

    def install_command(self, target: Path, requirements: Path) -> list[str]:
        """The installer command line: uv when it is on PATH, else pip from this interpreter."""
        uv = shutil.which("uv")
        if uv:
            return [
                uv, "pip", "install", "--quiet", "--no-deps", "--only-binary", ":all:",
                "--python-platform", self.platform, "--python-version", LAMBDA_PYTHON_VERSION,
                "--target", str(target), "-r", str(requirements),
            ]  # fmt: skip
        pip_platform = f"manylinux_{_GLIBC}_{_MACHINES[self.architecture]}"
        return [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
            "--no-deps", "--only-binary=:all:", "--platform", pip_platform, "--implementation", "cp",
            "--python-version", LAMBDA_PYTHON_VERSION, "--target", str(target), "-r", str(requirements),
        ]  # fmt: skip

    def build(self, output_dir: Path) -> None:
        """Install the requirements and copy the sources into `output_dir`; raises `BundleError` on failure."""
        with tempfile.TemporaryDirectory(prefix="agent-wait-bundle-") as tmp:
            requirements = Path(tmp) / "requirements.txt"
            requirements.write_text(self.requirements, encoding="utf-8")
            command = self.install_command(output_dir, requirements)
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
            raise BundleError(
                f"installing the Lambda dependencies failed (exit {result.returncode}): {' '.join(command)}\n{tail}\n"
                "The bundle needs PyPI or a warm uv/pip cache. To synthesize without bundling, "
                "run: cdk synth -c agent-wait:bundle=false"
            )
        shutil.rmtree(output_dir / "bin", ignore_errors=True)  # console scripts: useless in Lambda
        for source, dest in self.sources:
            target = output_dir / dest
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns(*_SKIPPED, "*.pyc"), dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)
        check_size(output_dir)


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
        name = re.split(r"[\s\[=<>~!@;]", stripped, maxsplit=1)[0].lower().replace("_", "-")
        if name == "agent-wait" or stripped in (".", "-e ."):
            continue
        kept.append(line)
    return "\n".join(kept) + ("\n" if requirements.endswith("\n") else "")


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
