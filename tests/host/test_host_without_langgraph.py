"""A Pydantic AI or Strands deployment never imports LangGraph: the router builds a checkpoint saver only for a graph.

The child interpreter has `langgraph` and `langgraph_checkpoint_aws` installed but poisoned: they can be
found (the host extra's check looks for them) and every attempt to import them is recorded and fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import boto3
import pytest
from tests.support.aws_stack import create_checkpoint_table, create_question_table

from agent_wait.contract.schema import Settings

ROOT = Path(__file__).resolve().parents[2]

POISON = textwrap.dedent(
    """
    import importlib.abc, importlib.machinery, sys

    BLOCKED = set(sys.argv[1].split(","))
    ATTEMPTS = []

    class Poisoned(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            ATTEMPTS.append(module.__name__)
            raise ImportError(f"{module.__name__} must not be imported in this deployment")

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                return importlib.machinery.ModuleSpec(name, Poisoned())
            return None

    sys.meta_path.insert(0, Blocker())
    """
)

ROUTE_A_START = textwrap.dedent(
    """
    import json
    from agent_wait.host import HostSettings
    from agent_wait.host import build_router

    router = build_router(HostSettings.from_env("router"))
    outcome = router.handle(json.dumps({"thread_id": sys.argv[2], "input": {"order_id": "o-1", "amount": 900}}))
    loaded = sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)
    print(json.dumps({
        "adapter": type(router.adapter).__name__,
        "kind": outcome.kind.value,
        "asked": list(outcome.asked),
        "attempts": ATTEMPTS,
        "loaded": loaded,
    }))
    """
)


STRANDS_QUESTION = "v1:tool_call:tu-1:ad341030-33e7-5831-9159-93573281a0b9"
"""The interrupt id Strands gives `@wait`'s interrupt on tool use `tu-1` (see tests/strands)."""


@pytest.mark.parametrize(
    ("folder", "graph", "adapter", "asked"),
    [
        ("pydantic_ai", "pydantic_ai_host_agents:hosted_refund", "PydanticAiAdapter", ["call-1"]),
        ("strands", "strands_host_agents:hosted_refund", "StrandsAdapter", [STRANDS_QUESTION]),
    ],
    ids=["pydantic_ai", "strands"],
)
def test_a_router_for_another_framework_handles_a_start_without_importing_langgraph(
    moto_server: str, unique: str, folder: str, graph: str, adapter: str, asked: list[str]
) -> None:
    # GIVEN a question table, a checkpoint table and a DLQ on moto, and AGENT_WAIT_GRAPH naming a non-LangGraph agent
    session = boto3.Session(region_name="us-east-1")
    dynamodb = session.client("dynamodb", endpoint_url=moto_server)
    sqs = session.client("sqs", endpoint_url=moto_server)
    create_question_table(dynamodb, f"questions-{unique}")
    create_checkpoint_table(dynamodb, f"checkpoints-{unique}")
    dlq = sqs.create_queue(QueueName=f"dlq-{unique}.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_WAIT_")}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT / "tests" / folder)]),
        "AWS_ENDPOINT_URL": moto_server,
        "AWS_DEFAULT_REGION": "us-east-1",
        Settings.GRAPH.value: graph,
        Settings.TABLE.value: f"questions-{unique}",
        Settings.CHECKPOINT_TABLE.value: f"checkpoints-{unique}",
        Settings.DLQ_URL.value: dlq,
    }

    # WHEN a fresh interpreter, where importing LangGraph or its DynamoDB saver fails, builds the router and
    # handles a start
    done = subprocess.run(
        [sys.executable, "-c", POISON + ROUTE_A_START, "langgraph,langgraph_checkpoint_aws", f"order-{unique}"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )

    # THEN the start parks on the agent's question, and LangGraph was never imported, not even tried
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "adapter": adapter,
        "kind": "started",
        "asked": asked,
        "attempts": [],
        "loaded": [],
    }
