"""Both ledgers pass the one conformance suite (agent_wait.testing.ledger_contract)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_wait.host import DynamoDbLedger, InMemoryLedger
from agent_wait.testing import ledger_contract


@pytest.mark.parametrize("rule", ledger_contract.REQUIRED, ids=lambda rule: rule.__name__)
def test_in_memory_ledger_conforms(rule: Any) -> None:
    shared = InMemoryLedger()
    rule(lambda: shared)


@pytest.mark.parametrize("rule", ledger_contract.REQUIRED, ids=lambda rule: rule.__name__)
def test_dynamodb_ledger_conforms(rule: Any, question_table: tuple[str, Any]) -> None:
    name, client = question_table
    rule(lambda: DynamoDbLedger(name, client=client))
