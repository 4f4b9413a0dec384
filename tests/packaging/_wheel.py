"""The wheel, built from this checkout, for the packaging tests (imported by each test module, not a conftest:
a conftest here would be the top-level module `conftest`, and other directories' conftests resolve their
type hints through that name)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", name="uv")
def uv_fixture() -> str:
    found = shutil.which("uv")
    if found is None:
        pytest.skip("uv is not on PATH (scripts/dev installs it)")
    return found


@pytest.fixture(scope="session", name="wheel")
def wheel_fixture(uv: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([uv, "build", "--wheel", "--out-dir", str(out), "-q"], cwd=ROOT, check=True, timeout=300)
    (built,) = out.glob("agent_wait-*.whl")
    return built
