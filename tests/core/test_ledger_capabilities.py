"""The ledger's interface is a small core plus declared capabilities; a host refuses a ledger lacking what it needs.

A backend declares a capability by deriving from its class (`FollowUpLedger`, `StartLedger`, `FailureLedger`,
`LeaseLedger`, `NoteLedger`), never by the signature of a method; the conformance suite asks of it only the
rules of the core and of what it declares.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_wait.errors import ArgumentError
from agent_wait.ledger import (
    Capability,
    InMemoryLedger,
    LeaseLedger,
    Ledger,
    NoteLedger,
    ThreadLease,
    capabilities_of,
    require_capabilities,
)
from agent_wait.testing import ledger_contract


class CoreOnly(Ledger):
    """A ledger of the core alone (questions and decisions), kept by an in-memory one."""

    def __init__(self) -> None:
        self.inner = InMemoryLedger()

    def open(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.open(*args, **kwargs)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.get(*args, **kwargs)

    def find(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.find(*args, **kwargs)

    def thread_exists(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.thread_exists(*args, **kwargs)

    def questions(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.questions(*args, **kwargs)

    def page(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.page(*args, **kwargs)

    def decide(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.decide(*args, **kwargs)

    def mark_resumed(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.mark_resumed(*args, **kwargs)

    def mark_announced(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.mark_announced(*args, **kwargs)


class LeasesWithoutNotes(CoreOnly, LeaseLedger):
    """Leases, but no notes: what it is given at a release it does not keep."""

    def __init__(self) -> None:
        super().__init__()
        self.releases: list[dict[str, Any]] = []

    def acquire_lease(
        self, thread_id: str, holder: str, *, now: datetime, seconds: float, runs_agent: bool = True
    ) -> ThreadLease | None:
        return ThreadLease(thread_id, holder, now.timestamp() + seconds)

    def release_lease(self, thread_id: str, holder: str, **recorded: Any) -> None:
        self.releases.append(recorded)


def test_the_shipped_ledgers_declare_every_capability_and_a_core_only_one_none() -> None:
    assert capabilities_of(InMemoryLedger) == frozenset(Capability)
    assert capabilities_of(InMemoryLedger()) == frozenset(Capability)
    assert capabilities_of(CoreOnly) == frozenset()
    assert capabilities_of(LeasesWithoutNotes) == {Capability.LEASES}
    assert issubclass(InMemoryLedger, NoteLedger)


@pytest.mark.parametrize("rule", ledger_contract.REQUIRED, ids=lambda rule: rule.__name__)
def test_a_core_only_ledger_passes_the_cores_rules(rule: Any) -> None:
    shared = CoreOnly()
    rule(lambda: shared)


def test_the_suite_asks_of_a_backend_only_the_rules_of_what_it_declares() -> None:
    assert ledger_contract.rules_for(CoreOnly) == ledger_contract.REQUIRED
    leases = ledger_contract.rules_for(LeasesWithoutNotes)
    assert leases == ledger_contract.REQUIRED + ledger_contract.BY_CAPABILITY[Capability.LEASES]
    assert set(ledger_contract.rules_for(InMemoryLedger)) == set(ledger_contract.EVERY)


def test_a_host_refuses_a_ledger_without_the_capabilities_it_needs_and_names_them() -> None:
    from agent_wait.engine import InMemoryDeadLetter, Router, Sweep

    message = (
        "Router needs a ledger with follow-ups, starts, failures, leases, notes; CoreOnly does not declare them "
        "(derive it from FollowUpLedger, StartLedger, FailureLedger, LeaseLedger, NoteLedger, and run their rules "
        "in agent_wait.testing.ledger_contract)"
    )
    with pytest.raises(ArgumentError, match=re.escape(message)):
        Router(object(), CoreOnly(), dead_letter=InMemoryDeadLetter())  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=re.escape("Sweep needs a ledger with follow-ups, failures;")):
        Sweep(CoreOnly(), None)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=re.escape("Sweep needs a Ledger; got a dict")):
        require_capabilities({}, Capability.FOLLOW_UPS, user="Sweep")


def test_a_lease_release_passes_no_note_to_a_ledger_that_keeps_none() -> None:
    import logging

    from agent_wait.asking.delivery import current_delivery
    from agent_wait.engine.lease import hold_thread

    ledger = LeasesWithoutNotes()
    with hold_thread(
        ledger,
        "t",
        clock=lambda: datetime(2030, 1, 1, tzinfo=UTC),
        seconds=60,
        wait=0,
        on_busy=lambda: None,
        log=logging.getLogger("test"),
    ):
        delivery = current_delivery("t")
        assert delivery is not None
        delivery.leave_note = lambda: "the saver's keys"
    assert ledger.releases == [{"open_questions": None, "note": None, "handed_over": None}]
