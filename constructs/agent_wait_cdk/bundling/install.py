"""Installing the requirements for the Lambda platform, without Docker.

`uv pip install --python-platform <arch>-manylinux_2_34 --python-version 3.13 --only-binary :all:` into the
asset, or pip with every compatible `--platform` tag (`pip_platforms`) and `--implementation cp` when uv is not on
PATH; `--no-deps` for a complete
closure, resolved for that platform for found requirements. Console scripts (`bin/`) are dropped: nothing
in Lambda runs them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from agent_wait_cdk.bundling.errors import BundleError

__all__ = ("ARCHITECTURES", "LAMBDA_PYTHON_VERSION", "install", "install_command", "pip_platforms", "platform")

LAMBDA_PYTHON_VERSION = "3.13"
"""The Lambda runtime the bundle targets (`python3.13`)."""
_GLIBC = "2_34"
"""Lambda's python3.13 runs on Amazon Linux 2023 (glibc 2.34): wheels up to manylinux_2_34 load there."""
_MACHINES = {"x86_64": "x86_64", "arm64": "aarch64"}
ARCHITECTURES = tuple(sorted(_MACHINES))
"""The Lambda architecture names the bundler builds for."""


_OLDEST_GLIBC_MINOR = {"x86_64": 5, "arm64": 17}
"""The oldest manylinux each machine has wheels under (manylinux1 is glibc 2.5; aarch64 wheels start at 2.17)."""
_LEGACY_ALIASES = {"x86_64": ("manylinux2014", "manylinux2010", "manylinux1"), "arm64": ("manylinux2014",)}
"""PEP 599/571/513 names some wheels still use for glibc 2.17, 2.12 and 2.5."""


def pip_platforms(architecture: str) -> list[str]:
    """Every platform tag a wheel for Lambda may carry, newest first, for pip's repeated `--platform`.

    pip takes one `--platform` literally (a `manylinux_2_34` tag matches no `manylinux_2_17` wheel), while uv's
    `--python-platform` means "this glibc or older": given every tag from 2.34 down, pip chooses as uv does.
    """
    machine = _MACHINES[architecture]
    tags = [
        f"manylinux_2_{minor}_{machine}" for minor in range(int(_GLIBC[2:]), _OLDEST_GLIBC_MINOR[architecture] - 1, -1)
    ]
    return tags + [f"{alias}_{machine}" for alias in _LEGACY_ALIASES[architecture]]


def platform(architecture: str) -> str:
    """The uv platform of a Lambda architecture (`x86_64-manylinux_2_34` or `aarch64-manylinux_2_34`)."""
    return f"{_MACHINES[architecture]}-manylinux_{_GLIBC}"


SOURCE_ONLY = ("http-ece",)
"""Pure-Python projects PyPI has no wheel of, built from their source distribution (the same on every platform):
`http-ece`, web push's payload encryption under `pywebpush`. Every other project must come as a wheel for the
Lambda platform. pip takes them only with `--no-deps` (a complete closure, the runtime's own pins)."""


def install_command(
    architecture: str,
    target: Path,
    requirements: Path,
    *,
    resolve: bool = False,
    python_version: str = LAMBDA_PYTHON_VERSION,
) -> list[str]:
    """The installer command line: uv when it is on PATH, else pip from this interpreter.

    `--no-deps` unless `resolve`: a complete closure is installed as it is; found requirements are
    resolved for the Lambda platform, as pip resolves a `requirements.txt`. `python_version` is for
    benches on a machine without the Lambda runtime's Python; a deployed bundle never sets it.
    """
    no_deps = [] if resolve else ["--no-deps"]
    uv = shutil.which("uv")
    if uv:
        return [
            uv, "pip", "install", "--quiet", *no_deps, "--only-binary", ":all:", *_from_source("--no-binary"),
            "--python-platform", platform(architecture), "--python-version", python_version,
            "--target", str(target), "-r", str(requirements),
        ]  # fmt: skip
    platforms = [flag for tag in pip_platforms(architecture) for flag in ("--platform", tag)]
    return [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
        *no_deps, "--only-binary=:all:", *(_from_source("--no-binary") if no_deps else []), *platforms,
        "--implementation", "cp",
        "--python-version", python_version, "--target", str(target), "-r", str(requirements),
    ]  # fmt: skip


def _from_source(flag: str) -> list[str]:
    return [part for name in SOURCE_ONLY for part in (flag, name)]


def install(
    architecture: str,
    requirements: str,
    output_dir: Path,
    *,
    resolve: bool = False,
    python_version: str = LAMBDA_PYTHON_VERSION,
    origin: str | None = None,
) -> None:
    """Install `requirements` (their text) into `output_dir` for the Lambda platform, then drop `bin/`.

    `origin`: where the requirements came from, in words (`LambdaBundle.origin`), said in the error.

    Raises:
        BundleError: the installer failed; the message holds its command, the end of its output and `origin`.
    """
    with tempfile.TemporaryDirectory(prefix="agent-wait-bundle-") as tmp:
        file = Path(tmp) / "requirements.txt"
        file.write_text(requirements, encoding="utf-8")
        command = install_command(architecture, output_dir, file, resolve=resolve, python_version=python_version)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
        if "No module named pip" in tail:
            hint = f"{command[0]} has no pip: install uv (pip install uv) or pip where cdk runs. "
        elif "No matching distribution" in tail or "no wheels" in tail.lower():
            hint = (
                "A requirement has no wheel for Lambda (CPython 3.13, manylinux up to glibc 2.34) at that version: "
                "pin a version that publishes one, or drop it from the bundle's requirements. "
            )
        else:
            hint = "The bundle needs PyPI (or a warm uv/pip cache). "
        said = f"The bundle's requirements: {origin}. " if origin else ""
        raise BundleError(
            f"installing the Lambda dependencies failed (exit {result.returncode}): {' '.join(command)}\n{tail}\n"
            f"{said}{hint}To synthesize without bundling, run: cdk synth -c agent-wait:bundle=false"
        )
    shutil.rmtree(output_dir / "bin", ignore_errors=True)  # console scripts: useless in Lambda
