"""The extras install what each deployment needs and nothing it does not: the host holds no agent framework."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from _wheel import ROOT, uv_fixture  # noqa: F401  (the uv fixture)

FRAMEWORK_PACKAGES = ("langgraph", "langgraph-checkpoint-aws", "langchain", "langchain-core", "pydantic-ai-slim")


def _pins(uv: str, *extras: str) -> set[str]:
    command = [uv, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project"]
    for extra in extras:
        command += ["--extra", extra]
    exported = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, timeout=120).stdout
    return {m.group(1).lower() for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", exported, re.MULTILINE)}


@pytest.mark.parametrize(
    ("extras", "framework"),
    [(("host", "pydantic-ai"), "pydantic-ai-slim"), (("host", "strands"), "strands-agents")],
    ids=["pydantic-ai", "strands"],
)
def test_a_pydantic_ai_or_strands_router_installs_neither_langgraph_nor_its_saver(
    uv: str, extras: tuple[str, ...], framework: str
) -> None:
    pins = _pins(uv, *extras)
    assert framework in pins
    assert not {"langgraph", "langgraph-checkpoint-aws", "langchain-core"} & pins


def test_a_langgraph_router_installs_langgraph_and_its_dynamodb_saver(uv: str) -> None:
    pins = _pins(uv, "langgraph-host")
    assert {"langgraph", "langgraph-checkpoint-aws", "aws-lambda-powertools"} <= pins
    assert "pydantic-ai-slim" not in pins


def test_a_langgraph_router_without_its_saver_names_the_extra() -> None:
    # In a fresh process where langgraph_checkpoint_aws is not installed, the host imports, and building the
    # checkpoint saver for a graph says which extra brings it.
    code = (
        "import sys; sys.modules['langgraph_checkpoint_aws'] = None\n"
        "import agent_wait.host\n"
        "from agent_wait.host import checkpoint_saver\n"
        "from agent_wait.errors import MissingExtraError\n"
        "try:\n"
        "    checkpoint_saver('t', None)\n"
        "except MissingExtraError as exc:\n"
        "    print(exc.extra, '|', exc)\n"
    )
    env_path = f"{ROOT / 'runtime'}"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    extra, message = done.stdout.strip().split(" | ", 1)
    assert extra == "langgraph-host"
    assert "pip install 'agent-wait[langgraph-host]'" in message
