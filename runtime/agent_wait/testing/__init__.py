"""Conformance suites shipped with the package (standard library only).

Every announcer, channel and ledger backend in agent-wait passes the same suite; a user's own can prove
itself the same way. Each rule is a plain function of a factory; its docstring states the rule.
"""

from agent_wait.testing import announce_contract, channel_contract

__all__ = ("announce_contract", "channel_contract")
