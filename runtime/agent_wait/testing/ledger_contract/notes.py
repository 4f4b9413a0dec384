"""Rules of the `notes` capability (`NoteLedger`): a release leaves a note the next lease takes once."""

from __future__ import annotations

import uuid
from datetime import timedelta

from agent_wait.testing.ledger_contract._support import T0, LedgerFactory


def a_release_leaves_a_note_the_next_lease_takes(make: LedgerFactory) -> None:
    """The note a release leaves comes back with the next lease, once: a holder that dies leaves none."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, f"a new thread's lease carries no note, got {first!r}"
    assert first.note is None, f"a new thread's lease carries no note, got {first!r}"
    ledger.release_lease(thread, "h-1", open_questions=["q-1"], note="latest: c-1")
    second = ledger.acquire_lease(thread, "h-2", now=T0, seconds=60)
    assert second is not None, f"expected the note left, got {second!r}"
    assert second.note == "latest: c-1", f"expected the note left, got {second!r}"
    assert second.open_questions == ("q-1",), f"the note leaves the open questions alone, got {second!r}"
    # h-2 dies holding the lease: whoever takes it over must not find the note h-2 may have made stale.
    taken = ledger.acquire_lease(thread, "h-3", now=T0 + timedelta(seconds=120), seconds=60)
    assert taken is not None, f"a note is taken once, got {taken!r}"
    assert taken.note is None, f"a note is taken once, got {taken!r}"
    ledger.release_lease(thread, "h-3")
    again = ledger.acquire_lease(thread, "h-4", now=T0 + timedelta(seconds=121), seconds=60)
    assert again is not None, f"a release without a note leaves none, got {again!r}"
    assert again.note is None, f"a release without a note leaves none, got {again!r}"
