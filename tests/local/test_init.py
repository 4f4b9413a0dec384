"""`agent-wait init`: the project it writes, its next steps, and what it pins.

That the project's own test passes on the emulator and its CDK app synthesizes (with its Lambda bundle built by
pip) is run from the built wheel, as a user runs it, by tests/packaging/test_journey.py: the README's quick start
calls `agent-wait init`, then `python -m pytest` in the project, then `npx cdk synth`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_wait.cli import main

FILES = (
    "my_agent/__init__.py",
    "my_agent/graph.py",
    "app.py",
    "cdk.json",
    "requirements-lambda.txt",
    "requirements.txt",
    "tests/test_my_agent.py",
    "README.md",
    "package.json",
)


def _clean_env(folder: Path) -> dict[str, str]:
    """The project's own terminal: no AWS settings, no repository on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AGENT_WAIT_", "PYTEST_"))}
    env.update(
        PYTHONPATH=str(folder), AWS_EC2_METADATA_DISABLED="true", JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20"
    )
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    assert main(["init", str(folder)]) == 0
    return folder


def test_init_writes_the_project_and_the_next_steps(project: Path) -> None:
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == sorted(FILES)
    readme = (project / "README.md").read_text()
    for command in ("pip install -r requirements.txt", "agent-wait dev --graph my_agent.graph:build_graph", "pytest"):
        assert command in readme
    assert json.loads((project / "cdk.json").read_text())["app"] == "python app.py"
    assert (project / "requirements.txt").read_text().startswith("agent-wait[local]==")


def test_the_project_pins_the_cdk_cli_this_repository_pins(project: Path) -> None:
    """`npx cdk` in the project runs the CDK CLI its package.json pins: the version agent-wait's own
    package-lock.json pins (tested with these constructs), not whatever npx would fetch."""
    lock = json.loads((Path(__file__).resolve().parents[2] / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/aws-cdk"]["version"]
    package = json.loads((project / "package.json").read_text())
    assert package["devDependencies"] == {"aws-cdk": pinned}
    assert package["private"] is True
    assert package["scripts"]["cdk"] == "cdk"
    readme = (project / "README.md").read_text()
    assert "npm install" in readme


def test_init_never_overwrites(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (project / "app.py").read_text()
    assert main(["init", str(project)]) == 1
    assert "already has README.md, app.py, cdk.json" in capsys.readouterr().err
    assert (project / "app.py").read_text() == before


def test_init_refuses_a_name_python_cannot_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path), "--name", "My-Agent"]) == 1
    assert "--name must be a Python package name" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
