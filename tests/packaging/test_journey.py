"""A pip user's journey, from the built wheel in a new virtualenv outside the repository, with no AWS credentials
and no uv on PATH.

The README's quick start, run as written, every step of it: `pip install 'agent-wait[local]'` (pip finds the
built wheel through `PIP_FIND_LINKS`, and every version is held to this checkout's lock through
`PIP_CONSTRAINT`: what pip installs is the README's, nothing more), the shipped refund example's demo,
`agent-wait init`, whatever the project's own steps are, its test, `agent-wait dev --graph`, and the second
terminal's `start`, `questions` and `answer`. Then `npx cdk synth` of the generated app with bundling on (pip
builds the Lambda bundle: uv is not on PATH), and an ordinary CDK app made the way `cdk init` makes one (its
root `requirements.txt` names `aws-cdk-lib`) that embeds `AgentWait`: it synthesizes with bundling on, and the
app's own requirements stay out of the bundle. `npx` finds this checkout's pinned CDK CLI through a
`node_modules` link, so no CLI is downloaded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _wheel import ROOT, uv_fixture, wheel_fixture  # noqa: F401  (the uv and wheel fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


# Session-scoped, not module-scoped: xdist may hand this worker other tests between two of this module's, and a
# module fixture would then be torn down and the whole journey (pip installs, the demo) run again.
@pytest.fixture(scope="session")
def venv(uv: str, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new, empty virtualenv (`python -m venv`: pip and nothing else), and pip told where the wheel is and which
    versions the lock holds (`pip.env`); the quick start installs everything else itself."""
    home = tmp_path_factory.mktemp("user")
    exported = subprocess.run(
        [uv, "export", "--frozen", "--no-hashes", "--no-emit-project", "--extra", "local"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    version = wheel.name.split("-")[1]
    constraints = home / "constraints.txt"
    constraints.write_text(f"{exported.stdout}agent-wait=={version}\n")
    env_dir = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=120)
    # pip byte-compiles every file it installs (8,000 here), half of the journey's install time; a Python that
    # writes bytecode compiles what it imports on first use instead, so the venv's own pip.conf turns it off.
    (env_dir / "pip.conf").write_text("[install]\ncompile = false\n")
    links = " ".join(filter(None, [str(wheel.parent), os.environ.get("PIP_FIND_LINKS")]))
    (env_dir / "pip.env").write_text(json.dumps({"PIP_FIND_LINKS": links, "PIP_CONSTRAINT": str(constraints)}))
    return env_dir


def _without_uv(path: str) -> str:
    """PATH without any folder that holds a `uv`: the journey never has it."""
    return os.pathsep.join(d for d in path.split(os.pathsep) if d and not (Path(d) / "uv").exists())


def _env(venv: Path) -> dict[str, str]:
    """A user's terminal: the venv first on PATH, no uv, no AWS settings or credentials anywhere, no repository on
    the path, bytecode written as Python writes it; pip pointed at the built wheel and the lock's versions."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AGENT_WAIT_", "PYTEST_", "VIRTUAL_ENV"))}
    keep.pop("PYTHONPATH", None)
    keep.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps what it compiles (pip compiled nothing)
    return {
        **keep,
        **json.loads((venv / "pip.env").read_text()),
        "PATH": f"{venv / 'bin'}{os.pathsep}{_without_uv(keep.get('PATH', ''))}",
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


def test_the_quick_start_installs_agent_wait_with_pip() -> None:
    assert FIRST[0] == "pip install 'agent-wait[local]'"


def test_the_quick_start_installs_the_projects_requirements_before_its_test() -> None:
    """Only what the README installs is installed: the project's test needs pytest, which its requirements.txt
    names, so the quick start installs them after `cd my-agent`."""
    assert "python -m pytest" in FIRST
    before_test = FIRST[: FIRST.index("python -m pytest")]
    assert "pip install -r requirements.txt" in before_test[before_test.index("cd my-agent") :], (
        "the README's quick start runs the project's test without installing its requirements.txt (pytest)"
    )


@pytest.fixture(scope="session")
def project(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first terminal of the quick start, up to `agent-wait dev`, every command run as written."""
    cwd = tmp_path_factory.mktemp("journey")
    for command in FIRST[:-1]:
        if command.startswith("cd "):
            cwd = cwd / command.removeprefix("cd ")
            continue
        result = _run(venv, cwd, "bash", "-c", command, timeout=900)
        if command == "agent-wait demo":
            assert "12 of 12 scenarios behaved as they should." in result.stdout, result.stdout[-2000:]
        if command == "python -m pytest":
            assert "1 passed" in result.stdout
    return cwd


def test_uv_is_not_on_the_journeys_path(venv: Path) -> None:
    assert shutil.which("uv", path=_env(venv)["PATH"]) is None


def test_the_wheel_installs_the_runtime_not_the_repository(venv: Path, project: Path) -> None:
    code = "import agent_wait.examples.refund_agent.graph as g; print(g.__file__)"
    found = _run(venv, project, "python", "-c", code, timeout=60)
    assert str(venv) in found.stdout
    assert str(ROOT) not in found.stdout


def test_pip_kept_aws_cdk_libs_copy_of_the_file_two_packages_ship(venv: Path, project: Path) -> None:
    """pip installs a dependency before its dependent, so aws-cdk-lib's copy of the shared module is the one kept
    (tests/cdk/test_cdk_install.py says why it matters)."""
    shared = "aws_cdk/cloud_assembly_schema/__init__.py"
    code = (
        "import importlib.metadata as m; "
        f"(f,) = [f for f in m.distribution('aws-cdk-lib').files if str(f) == {shared!r}]; "
        "print(f.hash.value, f.locate())"
    )
    recorded, located = _run(venv, project, "python", "-c", code, timeout=60).stdout.split()
    digest = base64.urlsafe_b64encode(hashlib.sha256(Path(located).read_bytes()).digest()).rstrip(b"=").decode()
    assert digest == recorded


def _npx_cdk_synth(venv: Path, app: Path) -> subprocess.CompletedProcess[str]:
    """`npx cdk synth` in `app`, bundling on, with this checkout's pinned CDK CLI (a `node_modules` link)."""
    (app / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    return _run(venv, app, "npx", "--no-install", "cdk", "synth", "--quiet", timeout=900)


def _lambda_assets(app: Path, template: str) -> list[Path]:
    """The bundled code folders of the template's functions, in `cdk.out`."""
    resources = json.loads((app / "cdk.out" / template).read_text())["Resources"]
    paths = {r["Metadata"]["aws:asset:path"] for r in resources.values() if r["Type"] == "AWS::Lambda::Function"}
    return [app / "cdk.out" / path for path in sorted(paths)]


@pytest.fixture(scope="session")
def synthesized(venv: Path, project: Path) -> Path:
    """The generated app after `npx cdk synth`, bundling on: pip builds the bundle (no uv on PATH)."""
    _npx_cdk_synth(venv, project)
    return project


def test_the_generated_cdk_app_synthesizes_with_its_bundle_built_by_pip(synthesized: Path) -> None:
    project = synthesized
    template = json.loads((project / "cdk.out" / "MyAgentStack.template.json").read_text())
    handlers = {
        r["Properties"].get("Handler") for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"
    }
    assert {"agent_wait.host.router.handler", "agent_wait.host.sweep.handler"} <= handlers
    (bundle,) = _lambda_assets(project, "MyAgentStack.template.json")
    assert (bundle / "agent_wait" / "host" / "router.py").is_file()
    assert (bundle / "langgraph").is_dir()
    assert (bundle / "my_agent" / "graph.py").is_file()


EXISTING_STACK = """from aws_cdk import Stack
from constructs import Construct

from agent_wait_cdk import AgentWait


class ExistingAppStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)
        AgentWait(self, "AgentWait", graph="my_agent.graph:build_graph", graph_source=["my_agent"])
"""

EXISTING_APP = """#!/usr/bin/env python3
import aws_cdk as cdk

from existing_app.existing_app_stack import ExistingAppStack

app = cdk.App()
ExistingAppStack(app, "ExistingAppStack")
app.synth()
"""


def test_an_ordinary_cdk_app_embeds_agent_wait_without_bundling_its_own_requirements(
    venv: Path, synthesized: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The bundle is named by a hash of everything that decides its content, the requirements text included. Given
    the quick start's graph, this app's bundle must hash as the quick start's (the runtime's pins, as they are),
    so CDK re-uses the one pip built, copied into this app's cdk.out. Had the app's own requirements.txt been
    picked up, the hash would differ, and the bundle would be built again with aws-cdk-lib in it, over Lambda's
    limit (the defect this guards against: 292 MB)."""
    project = synthesized
    # GIVEN an app laid out as `cdk init app --language python` lays one out: its root requirements.txt names
    # aws-cdk-lib and constructs, installed with pip as cdk init says; and the quick start's graph package
    app = tmp_path_factory.mktemp("existing") / "existing-app"
    (app / "existing_app").mkdir(parents=True)
    (app / "existing_app" / "__init__.py").write_text("")
    (app / "existing_app" / "existing_app_stack.py").write_text(EXISTING_STACK)
    (app / "app.py").write_text(EXISTING_APP)
    (app / "cdk.json").write_text(json.dumps({"app": "python3 app.py", "context": {"cli-telemetry": False}}))
    version = "import importlib.metadata as m; print(m.version('aws-cdk-lib'))"
    cdk_version = _run(venv, app, "python", "-c", version, timeout=60).stdout.strip()
    (app / "requirements.txt").write_text(f"aws-cdk-lib=={cdk_version}\nconstructs>=10.0.0,<11.0.0\n")
    (app / "requirements-dev.txt").write_text("pytest\n")
    shutil.copytree(project / "my_agent", app / "my_agent", ignore=shutil.ignore_patterns("__pycache__"))
    _run(venv, app, "pip", "install", "-r", "requirements.txt", timeout=300)
    (built,) = _lambda_assets(project, "MyAgentStack.template.json")
    shutil.copytree(built, app / "cdk.out" / built.name, symlinks=True, copy_function=os.link)

    # WHEN it synthesizes, bundling on
    result = _npx_cdk_synth(venv, app)

    # THEN its bundle is the quick start's (the runtime, the graph, never the CDK), and the synth said which file
    # it passed over
    (bundle,) = _lambda_assets(app, "ExistingAppStack.template.json")
    assert bundle.name == built.name
    assert (bundle / "my_agent" / "graph.py").is_file()
    assert not (bundle / "aws_cdk").exists()
    assert f"passed over {app / 'requirements.txt'}: it names aws-cdk-lib" in result.stdout + result.stderr


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
