"""Rules of the `refusals` capability (`RefusalLedger`): the last answer refused on the queue, on its row."""

from __future__ import annotations

import uuid

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.ledger import Refusal
from agent_wait.testing.ledger_contract._support import T0, LedgerFactory, make_decision, row_of, sample_envelope


def the_last_refusal_is_kept_on_the_row_and_changes_nothing_else(make: LedgerFactory) -> None:
    """`note_refusal` keeps the refusal as `last_refusal` (replacing the one before), on an open row and on a decided
    one, and moves nothing else: status, due time and progress stay; a question that is not there says False."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    envelope = sample_envelope(thread_id=thread)
    ledger.open(envelope, now=T0)
    question_id = envelope.question_id
    before = row_of(ledger, thread, question_id)
    assert before.last_refusal is None, f"a new row has no refusal, got {before.last_refusal!r}"

    first = Refusal("action_not_allowed", "allowed: approve, reject", format_rfc3339(T0), "m-1", "bob@example.com")
    assert ledger.note_refusal(thread, question_id, first) is True
    kept = row_of(ledger, thread, question_id)
    assert kept.last_refusal == first, f"expected the refusal kept, got {kept.last_refusal!r}"
    assert (kept.status, kept.due_at, kept.progress) == (before.status, before.due_at, before.progress), (
        f"a refusal moves nothing else, got {kept!r}"
    )

    ledger.decide(thread, question_id, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=T0)
    second = Refusal("already_decided", "another answer won", format_rfc3339(T0), via="queue")
    assert ledger.note_refusal(thread, question_id, second) is True
    decided = row_of(ledger, thread, question_id)
    assert decided.last_refusal == second, f"the last refusal replaces the one before, got {decided.last_refusal!r}"
    assert decided.status is QuestionStatus.ANSWERED, f"a refusal leaves the decision, got {decided.status}"

    assert ledger.note_refusal(thread, "q-never-asked", second) is False, "no row: nothing is written"
    assert ledger.get(thread, "q-never-asked") is None, "no row is made for a question never asked"
