"""The ledger conformance suite runs with the core alone: no host extra, no boto3, no Powertools, no LangGraph."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from agent_wait.testing import ledger_contract

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = (
    "boto3",
    "botocore",
    "aws_lambda_powertools",
    "langgraph",
    "langgraph_checkpoint_aws",
    "pydantic_ai",
    "strands",
)

RUN_THE_SUITE = textwrap.dedent(
    """
    import json, sys

    hidden = sys.argv[1].split(",")
    for name in hidden:
        sys.modules[name] = None  # importing it now raises ImportError, as if it were not installed

    from agent_wait.ledger import InMemoryLedger
    from agent_wait.testing import ledger_contract

    passed = []
    for rule in ledger_contract.rules_for(InMemoryLedger):
        rule(InMemoryLedger)
        passed.append(rule.__name__)
    outer = sorted(m for m in sys.modules if m.startswith(("agent_wait.host", "agent_wait.aws")))
    print(json.dumps({"passed": passed, "outer": outer}))
    """
)


def test_the_ledger_contract_runs_against_the_in_memory_ledger_with_only_the_core():
    # GIVEN a fresh interpreter where boto3, botocore, Powertools and every framework are unimportable
    # WHEN it runs every rule of the ledger suite against the in-memory ledger
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUN_THE_SUITE, ",".join(HIDDEN)],
        cwd=ROOT / "runtime",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    # THEN every rule passes, and neither the host nor the AWS provider was loaded
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] == [rule.__name__ for rule in ledger_contract.EVERY]
    assert result["outer"] == []


def test_the_host_ledger_paths_still_name_the_core_ledger():
    # The interface moved to the core; the host's old import paths keep working and name the same objects.
    from agent_wait import ledger
    from agent_wait.ledger import InMemoryLedger, Ledger, base, memory

    assert (Ledger, InMemoryLedger) == (ledger.Ledger, ledger.InMemoryLedger)
    assert memory.InMemoryLedger is ledger.InMemoryLedger
    assert all(getattr(base, name) is getattr(ledger, name) for name in base.__all__ if hasattr(ledger, name))
