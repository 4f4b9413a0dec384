"""A pip user's journey, from the built wheel in a new virtualenv outside the repository, with no AWS credentials.

The README's quick start, run as written: the wheel installed with the documented extra (`agent-wait[local]`,
versions held to this checkout's lock), the shipped refund example's demo, `agent-wait init`, the project's
own test, `agent-wait dev --graph`, and the second terminal's `start`, `questions` and `answer`. Then a synth
of the generated CDK app with bundling skipped.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _wheel import ROOT, uv_fixture, wheel_fixture  # noqa: F401  (the uv and wheel fixtures)

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


def quick_start() -> tuple[list[str], list[str]]:
    """The README's quick start: the commands of its first terminal, and of its second."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first, second = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)[:2]

    def commands(block: str) -> list[str]:
        return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]

    return commands(first), commands(second)


FIRST, SECOND = quick_start()


def test_the_quick_start_installs_the_extra_this_test_installs() -> None:
    assert FIRST[0] == "pip install 'agent-wait[local]'"


@pytest.fixture(scope="module")
def project(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first terminal of the quick start, up to `agent-wait dev`, run as written (pip is the wheel, above)."""
    cwd = tmp_path_factory.mktemp("journey")
    for command in FIRST[1:-1]:
        if command.startswith("cd "):
            cwd = cwd / command.removeprefix("cd ")
            continue
        result = _run(venv, cwd, "bash", "-c", command)
        if command == "agent-wait demo":
            assert "11 of 11 scenarios behaved as they should." in result.stdout, result.stdout[-2000:]
        if command == "python -m pytest":
            assert "1 passed" in result.stdout
    return cwd


def test_the_wheel_installs_the_runtime_not_the_repository(venv: Path, project: Path) -> None:
    code = "import agent_wait.examples.refund_agent.graph as g; print(g.__file__)"
    found = _run(venv, project, "python", "-c", code, timeout=60)
    assert str(venv) in found.stdout
    assert str(ROOT) not in found.stdout


def test_the_generated_cdk_app_synthesizes_without_bundling(venv: Path, project: Path) -> None:
    out = project / "cdk.out"
    context = json.dumps({"agent-wait:bundle": "false"})
    _run(venv, project, "python", "app.py", CDK_CONTEXT_JSON=context, CDK_OUTDIR=str(out))
    template = json.loads((out / "MyAgentStack.template.json").read_text())
    handlers = {
        r["Properties"].get("Handler") for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"
    }
    assert {"agent_wait.host.router.handler", "agent_wait.host.sweep.handler"} <= handlers


@pytest.fixture
def dev(venv: Path, project: Path) -> Iterator[subprocess.Popen[str]]:
    """The quick start's last first-terminal command, `agent-wait dev --graph ...`, until it prints how to call it."""
    assert FIRST[-1].startswith("agent-wait dev --graph ")
    log = (project / "dev.log").open("w")
    server = subprocess.Popen(
        ["bash", "-c", f"exec {FIRST[-1]}"],
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
            assert server.wait(timeout=60) == 0, (project / "dev.log").read_text()
        finally:
            if server.poll() is None:
                server.kill()
            log.close()


def _questions(venv: Path, project: Path, *args: str) -> list[dict[str, Any]]:
    result = _run(venv, project, "agent-wait", "questions", *args, "--output", "json", timeout=60)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def _eventually(check: Any, what: str, project: Path) -> Any:
    deadline = time.monotonic() + 60
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what}\n{(project / 'dev.log').read_text()[-3000:]}"
        time.sleep(1)
    return found


def test_the_second_terminal_starts_lists_and_answers_with_no_credentials(
    venv: Path, project: Path, dev: subprocess.Popen[str]
) -> None:
    start, listing, answer, resumed = SECOND
    _run(venv, project, "bash", "-c", start, timeout=60)
    (question,) = _eventually(lambda: _questions(venv, project), "the start never asked", project)
    assert question["question_id"] in _run(venv, project, "bash", "-c", listing, timeout=60).stdout
    _run(venv, project, "bash", "-c", answer.replace("QUESTION_ID", question["question_id"]), timeout=60)
    _eventually(
        lambda: question["question_id"] in _run(venv, project, "bash", "-c", resumed, timeout=60).stdout,
        "the answer never resumed the agent",
        project,
    )
    assert dev.poll() is None
