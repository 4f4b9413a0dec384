"""`agent-wait init`: the project it writes, its next steps, and what it pins.

That the project's own test passes on the emulator and its CDK app synthesizes (with its Lambda bundle built by
pip) is run from the built wheel, as a user runs it, by tests/packaging/test_journey.py: the README's quick start
calls `agent-wait init`, then `python -m pytest` in the project, then `npx cdk synth`."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="module")
def synthesized(project: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The project's CDK app run as `cdk synth -c agent-wait:bundle=false` runs it, in a terminal that has not
    silenced jsii's Node banner: (what it printed on stderr, the cloud assembly's folder)."""
    out = tmp_path_factory.mktemp("cdk.out")
    env = _clean_env(project)
    env.pop("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION")
    env.update(CDK_CONTEXT_JSON=json.dumps({"agent-wait:bundle": "false"}), CDK_OUTDIR=str(out))
    result = subprocess.run(
        [sys.executable, "app.py"], cwd=project, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stderr, out


def test_synthesizing_the_project_prints_no_python_bytes_and_no_node_banner(synthesized: tuple[str, Path]) -> None:
    """jsii prints each line its Node process writes outside its protocol as a Python bytes literal (`b'!!  Node 20
    is end-of-life ...'`): the project silences the banner before the CDK loads, as this repository does."""
    # GIVEN the generated project, WHEN its app synthesizes on a Node that jsii calls end-of-life
    stderr, _ = synthesized
    # THEN nothing it prints is a bytes literal, and the banner is not there
    assert not [line for line in stderr.splitlines() if line.startswith(("b'", 'b"'))], stderr[-2000:]
    assert "end-of-life" not in stderr


def test_the_projects_alarms_notify_its_alarm_topic_so_synth_does_not_warn(synthesized: tuple[str, Path]) -> None:
    # GIVEN the generated project, WHEN it synthesizes
    _, out = synthesized
    warnings = [str(entry["data"]) for entry in _metadata(out) if entry["type"] == "aws:cdk:warning"]
    # THEN no alarm notifies nobody: every alarm's action is the project's one alarm topic
    assert not [warning for warning in warnings if "notify nobody" in warning], warnings
    resources = json.loads((out / "MyAgentStack.template.json").read_text())["Resources"]
    topics = [key for key, value in resources.items() if value["Type"] == "AWS::SNS::Topic" and "Alarm" in key]
    alarms = [value for value in resources.values() if value["Type"] == "AWS::CloudWatch::Alarm"]
    assert len(topics) == 1, topics
    assert alarms
    assert all({"Ref": topics[0]} in alarm["Properties"]["AlarmActions"] for alarm in alarms)


def _metadata(out: Path) -> list[dict]:
    """Every metadata entry of the cloud assembly's artifacts: in the manifest, or in the file it names."""
    entries = []
    for artifact in json.loads((out / "manifest.json").read_text())["artifacts"].values():
        by_path = dict(artifact.get("metadata") or {})
        if artifact.get("additionalMetadataFile"):
            by_path.update(json.loads((out / artifact["additionalMetadataFile"]).read_text()))
        entries += [entry for found in by_path.values() for entry in found]
    return entries


@pytest.fixture(scope="module")
def generated_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The generated project's graph module (`init_answers_agent.graph`), imported from a project of its own."""
    folder = tmp_path_factory.mktemp("answers")
    assert main(["init", str(folder), "--name", "init_answers_agent"]) == 0
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("init_answers_agent.graph")
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name.startswith("init_answers_agent")]:
            del sys.modules[name]


def _resumed_with(module: Any, answer: Any) -> str:
    """The generated graph's `result` once its one question is answered with `answer`."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    graph = module.build_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "svc-1"}}
    parked = graph.invoke({"service": "billing"}, config)
    return graph.invoke(Command(resume={parked["__interrupt__"][0].id: answer}), config)["result"]


def test_the_generated_graph_tells_a_cancel_from_the_deadline_and_says_why(generated_graph: Any) -> None:
    from agent_wait.dialects import cancellation

    # GIVEN the generated graph, whose policy declares no on_cancel
    policy = generated_graph.APPROVAL
    assert policy.on_cancel is None
    # WHEN its question is cancelled by a person, or its deadline applies the default, or a person rejects
    cancelled = _resumed_with(generated_graph, cancellation("the outage is over", "ops@example.com"))
    expired = _resumed_with(generated_graph, policy.default)
    rejected = _resumed_with(generated_graph, {"action": "reject", "note": "not during the sale"})
    # THEN each result says what happened and why, in its own words: the cancel never reads as the deadline's
    assert cancelled == "not restarted: cancelled by ops@example.com (the outage is over)"
    assert expired == "not restarted: reject (nobody answered within a day)"
    assert rejected == "not restarted: reject (not during the sale)"
    assert _resumed_with(generated_graph, {"action": "approve"}) == "restarted billing"
