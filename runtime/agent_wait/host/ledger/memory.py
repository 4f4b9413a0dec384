"""`InMemoryLedger`, kept importable from its old home; it lives in the core, `agent_wait.ledger`."""

from agent_wait.ledger.memory import InMemoryLedger

__all__ = ("InMemoryLedger",)
