"""Installing the requirements for the Lambda platform, without Docker.

`uv pip install --python-platform <arch>-manylinux_2_34 --python-version 3.13 --only-binary :all:` into the
asset, or pip with `--platform`/`--implementation cp` when uv is not on PATH; `--no-deps` for a complete
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

__all__ = ("ARCHITECTURES", "LAMBDA_PYTHON_VERSION", "install", "install_command", "platform")

LAMBDA_PYTHON_VERSION = "3.13"
"""The Lambda runtime the bundle targets (`python3.13`)."""
_GLIBC = "2_34"
"""Lambda's python3.13 runs on Amazon Linux 2023 (glibc 2.34): wheels up to manylinux_2_34 load there."""
_MACHINES = {"x86_64": "x86_64", "arm64": "aarch64"}
ARCHITECTURES = tuple(sorted(_MACHINES))
"""The Lambda architecture names the bundler builds for."""


def platform(architecture: str) -> str:
    """The uv platform of a Lambda architecture (`x86_64-manylinux_2_34` or `aarch64-manylinux_2_34`)."""
    return f"{_MACHINES[architecture]}-manylinux_{_GLIBC}"


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
            uv, "pip", "install", "--quiet", *no_deps, "--only-binary", ":all:",
            "--python-platform", platform(architecture), "--python-version", python_version,
            "--target", str(target), "-r", str(requirements),
        ]  # fmt: skip
    pip_platform = f"manylinux_{_GLIBC}_{_MACHINES[architecture]}"
    return [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
        *no_deps, "--only-binary=:all:", "--platform", pip_platform, "--implementation", "cp",
        "--python-version", python_version, "--target", str(target), "-r", str(requirements),
    ]  # fmt: skip


def install(
    architecture: str,
    requirements: str,
    output_dir: Path,
    *,
    resolve: bool = False,
    python_version: str = LAMBDA_PYTHON_VERSION,
) -> None:
    """Install `requirements` (their text) into `output_dir` for the Lambda platform, then drop `bin/`.

    Raises:
        BundleError: the installer failed; the message holds its command and the end of its output.
    """
    with tempfile.TemporaryDirectory(prefix="agent-wait-bundle-") as tmp:
        file = Path(tmp) / "requirements.txt"
        file.write_text(requirements, encoding="utf-8")
        command = install_command(architecture, output_dir, file, resolve=resolve, python_version=python_version)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
        raise BundleError(
            f"installing the Lambda dependencies failed (exit {result.returncode}): {' '.join(command)}\n{tail}\n"
            "The bundle needs PyPI or a warm uv/pip cache. To synthesize without bundling, "
            "run: cdk synth -c agent-wait:bundle=false"
        )
    shutil.rmtree(output_dir / "bin", ignore_errors=True)  # console scripts: useless in Lambda
