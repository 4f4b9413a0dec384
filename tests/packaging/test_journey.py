"""A pip user's journey, from the built wheel in a new virtualenv outside the repository, with no AWS credentials.

Install the wheel with the documented extra (`agent-wait[local]`, versions held to this checkout's lock),
then, as the README's quick start says: `agent-wait init`, the project's own test, `agent-wait dev --graph`
with `agent-wait start`, `questions` and `answer` from another terminal, a synth of the project's CDK app,
and the shipped refund example's demo.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.packaging.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def venv(uv: str, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv with `agent-wait[local]` from the wheel and pytest, pinned to the lock's versions."""
    home = tmp_path_factory.mktemp("user")
    constraints = home / "constraints.txt"
    exported = subprocess.run(
        [uv, "export", "--frozen", "--no-hashes", "--no-emit-project", "--extra", "local"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    constraints.write_text(exported.stdout)
    env_dir = home / "venv"
    subprocess.run([uv, "venv", "-q", "--python", "3.11", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    install = [uv, "pip", "install", "-q", "--python", str(python), "-c", str(constraints)]
    subprocess.run([*install, f"agent-wait[local] @ {wheel.as_uri()}", "pytest"], check=True, timeout=600)
    return env_dir


def _env(venv: Path) -> dict[str, str]:
    """A user's terminal: the venv first on PATH, no AWS settings or credentials anywhere, no repository on the path."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AGENT_WAIT_", "PYTEST_", "VIRTUAL_ENV"))}
    keep.pop("PYTHONPATH", None)
    return {
        **keep,
        "PATH": f"{venv / 'bin'}{os.pathsep}{keep.get('PATH', '')}",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
    }


def _run(venv: Path, cwd: Path, *command: str, timeout: int = 300, **env: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        command, cwd=cwd, env={**_env(venv), **env}, capture_output=True, text=True, check=False, timeout=timeout
    )
    assert result.returncode == 0, f"{command}: {result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def project(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("journey") / "restart-agent"
    folder.mkdir()
    _run(venv, folder, "agent-wait", "init", "--name", "restarter")
    return folder


def test_the_wheel_installs_the_runtime_not_the_repository(venv: Path, project: Path) -> None:
    code = "import agent_wait.examples.refund_agent.graph as g; print(g.__file__)"
    found = _run(venv, project, "python", "-c", code, timeout=60)
    assert str(venv) in found.stdout
    assert str(ROOT) not in found.stdout


def test_the_generated_projects_test_starts_and_answers_on_the_emulator(venv: Path, project: Path) -> None:
    result = _run(venv, project, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    assert "1 passed" in result.stdout


def test_the_generated_cdk_app_synthesizes_without_bundling(venv: Path, project: Path) -> None:
    out = project / "cdk.out"
    context = json.dumps({"agent-wait:bundle": "false"})
    _run(venv, project, "python", "app.py", CDK_CONTEXT_JSON=context, CDK_OUTDIR=str(out))
    template = json.loads((out / "RestarterStack.template.json").read_text())
    handlers = {
        r["Properties"].get("Handler") for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"
    }
    assert {"agent_wait.host.router.handler", "agent_wait.host.sweep.handler"} <= handlers


@pytest.fixture
def dev(venv: Path, project: Path) -> Iterator[subprocess.Popen[str]]:
    """`agent-wait dev --graph restarter.graph:build_graph` in its own terminal, until it prints how to call it."""
    log = (project / "dev.log").open("w")
    server = subprocess.Popen(
        ["agent-wait", "dev", "--graph", "restarter.graph:build_graph"],
        cwd=project,
        env=_env(venv),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while "curl" not in (project / "dev.log").read_text() and server.poll() is None:
            assert time.monotonic() < deadline, (project / "dev.log").read_text()
            time.sleep(0.5)
        assert server.poll() is None, (project / "dev.log").read_text()
        yield server
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
            log.close()


def _questions(venv: Path, project: Path, *args: str) -> list[dict[str, Any]]:
    result = _run(venv, project, "agent-wait", "questions", *args, "--output", "json", timeout=60)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_the_cli_starts_lists_and_answers_against_dev_with_no_credentials(
    venv: Path, project: Path, dev: subprocess.Popen[str]
) -> None:
    _run(venv, project, "agent-wait", "start", "svc-1", "--input", '{"service": "billing"}', "--start-id", "s-1")
    deadline = time.monotonic() + 60
    while not (open_questions := _questions(venv, project)):
        assert time.monotonic() < deadline, "the start never asked"
        time.sleep(1)
    (question,) = open_questions
    _run(venv, project, "agent-wait", "answer", question["question_id"], "approve", "--queue", timeout=60)
    deadline = time.monotonic() + 60
    while _questions(venv, project, "--status", "resumed") == []:
        assert time.monotonic() < deadline, (project / "dev.log").read_text()
        time.sleep(1)
    assert dev.poll() is None


def test_the_shipped_refund_example_runs_its_demo(venv: Path, tmp_path: Path) -> None:
    result = _run(venv, tmp_path, "agent-wait", "demo", "approve", "middleware", timeout=300)
    assert "2 of 2 scenarios behaved as they should." in result.stdout, result.stdout[-2000:]
