"""The wheel a pip user installs carries what the code reads at run time: type markers and the pages."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from _wheel import ROOT, uv_fixture, wheel_fixture  # noqa: F401  (the uv and wheel fixtures)


@pytest.fixture(scope="session")
def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_both_packages_are_typed(wheel_files: set[str]) -> None:
    assert {"agent_wait/py.typed", "agent_wait_cdk/py.typed"} <= wheel_files


def test_every_page_file_the_api_serves_is_in_the_wheel(wheel_files: set[str]) -> None:
    pages = {f"agent_wait/host/api/pages/{p.name}" for p in (ROOT / "runtime/agent_wait/host/api/pages").iterdir()}
    assert pages
    assert pages <= wheel_files


def test_the_lambda_requirements_ship_with_the_constructs(wheel_files: set[str]) -> None:
    assert "agent_wait_cdk/requirements-lambda.txt" in wheel_files


def test_the_refund_example_ships_inside_the_runtime_package(wheel_files: set[str]) -> None:
    example = {f"agent_wait/examples/refund_agent/{p.name}" for p in (ROOT / "examples/refund_agent").glob("*.py")}
    assert "agent_wait/examples/refund_agent/local.py" in example
    assert example | {"agent_wait/examples/__init__.py"} <= wheel_files
    assert not any(name.startswith("examples/") for name in wheel_files), "no top-level examples package"
