"""Rules of the `starts` capability (`StartLedger`): a start recorded once."""

from __future__ import annotations

import uuid

from agent_wait.ledger import (
    StartState,
)
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory


def a_start_is_recorded_once(make: LedgerFactory) -> None:
    """`begin_start` creates a running start once; again it returns the same record; `finish_start` marks it done."""
    ledger = make()
    thread, start_id = f"thread-{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    first = ledger.begin_start(thread, start_id, marker="m-1", now=T0)
    again = ledger.begin_start(thread, start_id, marker="m-2", now=T0)
    assert first.created, "the first begin_start creates the start"
    assert not again.created, "a start is created once"
    assert (again.state, again.marker) == ("running", "m-1"), f"the first marker must be kept, got {again!r}"
    assert ledger.thread_exists(thread), "a thread with a start exists"
    ledger.finish_start(thread, start_id, ("q-1",), now=T0)
    done = ledger.begin_start(thread, start_id, marker=None, now=T0)
    assert (done.state, done.question_ids) == ("done", ("q-1",)), f"expected a done start, got {done!r}"
    failed_id = uuid.uuid4().hex
    ledger.begin_start(thread, failed_id, marker=None, now=T0)
    ledger.finish_start(thread, failed_id, (), now=T0, state=StartState.FAILED)
    failed = ledger.begin_start(thread, failed_id, marker=None, now=T0)
    assert failed.state == "failed", f"a failed start must stay failed, got {failed!r}"
    assert ledger.questions(thread) == [], "a start is not a question"
