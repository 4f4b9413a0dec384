"""The ledger conformance suite: every rule a question ledger keeps, one plain function each.

A backend opts in with one short file:

    @pytest.mark.parametrize("rule", ledger_contract.REQUIRED, ids=lambda rule: rule.__name__)
    def test_my_ledger_conforms(rule):
        rule(lambda: MyLedger(...))

Each rule builds fresh ids, so a factory may return the same store every time. Standard library only.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_wait._time import format_rfc3339
from agent_wait.envelope import Question, WaitEnvelope
from agent_wait.errors import ArgumentError
from agent_wait.ledger import (
    AdvanceResult,
    Decision,
    FailureKind,
    Ledger,
    Notice,
    Progress,
    QuestionRecord,
    StartState,
    ThreadFailure,
    Vote,
)
from agent_wait.policy import WaitPolicy
from agent_wait.schema import QuestionStatus

__all__ = ("REQUIRED", "LedgerFactory", "sample_envelope")

LedgerFactory = Callable[[], Ledger]
"""Returns the `agent_wait.ledger.Ledger` under test (a fresh one, or the same store every time)."""

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)


def _decision(status: QuestionStatus, answer: Any, answer_id: str | None = None) -> Decision:
    return Decision(status, answer, answer_id or f"a-{uuid.uuid4().hex}", "tester")


def sample_envelope(
    *,
    thread_id: str | None = None,
    timeout: str | None = "PT1H",
    asked_at: datetime = T0,
    question: Any = None,
    tags: dict[str, str] | None = None,
    reminders: tuple[str, ...] = (),
    quorum: int | None = None,
) -> WaitEnvelope:
    """A fresh question with unique ids, asked at `asked_at` (with `reminders` and a `quorum` when given)."""
    policy = WaitPolicy(
        timeout=timeout,
        default={"action": "reject", "flag": False, "n": 0},
        tags=tags,
        reminders=reminders,
        quorum=quorum,
    )
    return WaitEnvelope.create(
        Question(
            thread_id or f"thread-{uuid.uuid4().hex[:12]}",
            f"q-{uuid.uuid4().hex}",
            question if question is not None else {"function": "issue_refund", "args": {"amount": 410.25}},
            policy,
            source={"function": "issue_refund"},
            asked_at=asked_at,
        )
    )


def open_records_the_question(make: LedgerFactory) -> None:
    """`open` records a question as open, with every envelope field, floats and falsy values intact."""
    ledger = make()
    envelope = sample_envelope()
    opened = ledger.open(envelope, now=T0)
    assert opened.created, "the first open must create the row"
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None, "an opened question must be readable"
    assert record.status is QuestionStatus.OPEN, f"expected open, got {record.status}"
    assert record.envelope.to_dict() == envelope.to_dict(), (
        f"expected {envelope.to_dict()}, got {record.envelope.to_dict()}"
    )
    assert not record.announced, "a new question is not announced yet"


def reopen_never_overwrites(make: LedgerFactory) -> None:
    """Opening a recorded question again changes nothing: not its status, outcome, nor `expires_at`."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    ledger.decide(
        envelope.thread_id, envelope.question_id, _decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=T0
    )
    later = WaitEnvelope.create(
        Question(
            envelope.thread_id,
            envelope.question_id,
            envelope.question,
            WaitPolicy(timeout="P9D"),
            asked_at=T0 + timedelta(days=1),
        )
    )
    again = ledger.open(later, now=T0 + timedelta(days=1))
    assert not again.created, "a republish must not create a second row"
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None, "a republished question must still be readable"
    assert record.status is QuestionStatus.ANSWERED, f"status was clobbered: {record.status}"
    assert record.expires_at == envelope.expires_at, f"expires_at moved: {envelope.expires_at} -> {record.expires_at}"


def first_decision_wins(make: LedgerFactory) -> None:
    """The first decision moves open to its outcome; a second, different one loses and learns the winner."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    first = ledger.decide(
        envelope.thread_id, envelope.question_id, _decision(QuestionStatus.ANSWERED, {"action": "approve"}, "A"), now=T0
    )
    second = ledger.decide(
        envelope.thread_id, envelope.question_id, _decision(QuestionStatus.ANSWERED, {"action": "reject"}, "B"), now=T0
    )
    assert first.won, "the first decision must win"
    assert not second.won, "a second decision must lose"
    assert second.record.answer_id == "A", f"the loser must see the winner's answer id, got {second.record.answer_id!r}"
    assert second.record.answer == {"action": "approve"}, f"the winner's answer changed: {second.record.answer!r}"


def a_decision_records_who_made_it_and_how(make: LedgerFactory) -> None:
    """The claimed answerer, the transport's identity, the way it came and an untrusted claim are all kept."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    decision = Decision(
        QuestionStatus.ANSWERED,
        {"action": "approve"},
        "a-1",
        "sqs:AROAOTHER",
        sender="AROAOTHER:lambda",
        via="queue",
        claimed_by="cfo@example.com",
    )
    ledger.decide(envelope.thread_id, envelope.question_id, decision, now=T0)
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None
    got = (record.answered_by, record.sender, record.via, record.claimed_by)
    assert got == ("sqs:AROAOTHER", "AROAOTHER:lambda", "queue", "cfo@example.com"), f"got {got}"


def _race(racers: int, run: Callable[[int], bool]) -> list[int]:
    """Run `run(index)` in `racers` threads released at once; the indexes whose call returned True."""
    barrier = threading.Barrier(racers)
    winners: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def race(index: int) -> None:
        try:
            barrier.wait(timeout=60)
            won = run(index)
        except BaseException as exc:  # reported below: a thread's failure must not look like a lost race
            with lock:
                errors.append(exc)
            return
        if won:
            with lock:
                winners.append(index)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, f"racers raised: {errors!r}"
    return winners


def racing_decisions_have_one_winner(make: LedgerFactory) -> None:
    """Eight threads deciding the same question at once: exactly one wins."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)

    def decide(index: int) -> bool:
        decision = _decision(QuestionStatus.ANSWERED, {"action": "approve", "i": index})
        return ledger.decide(envelope.thread_id, envelope.question_id, decision, now=T0).won

    winners = _race(8, decide)
    assert len(winners) == 1, f"expected exactly one winner, got {len(winners)} of 8"


def decide_unknown_question_raises_key_error(make: LedgerFactory) -> None:
    """Deciding a question that was never opened raises KeyError and creates no row."""
    ledger = make()
    envelope = sample_envelope()
    try:
        ledger.decide(envelope.thread_id, envelope.question_id, _decision(QuestionStatus.ANSWERED, None), now=T0)
    except KeyError:
        pass
    else:
        raise AssertionError("deciding an unknown question must raise KeyError")
    assert ledger.get(envelope.thread_id, envelope.question_id) is None, "a phantom row was created"


def resumed_only_after_a_decision(make: LedgerFactory) -> None:
    """`mark_resumed` refuses an open question, moves a decided one to resumed once, and keeps its outcome."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    assert not ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0), (
        "an open question cannot be resumed"
    )
    ledger.decide(
        envelope.thread_id, envelope.question_id, _decision(QuestionStatus.EXPIRED, {"action": "reject"}), now=T0
    )
    assert ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0), "a decided question can be resumed"
    assert not ledger.mark_resumed(envelope.thread_id, envelope.question_id, now=T0), "resumed only once"
    record = ledger.get(envelope.thread_id, envelope.question_id)
    assert record is not None, "a resumed question must still be readable"
    assert record.status is QuestionStatus.RESUMED, f"expected resumed, got {record.status}"
    assert record.outcome is QuestionStatus.EXPIRED, f"the outcome must survive resuming, got {record.outcome}"


def due_returns_exactly_the_due_open_questions_soonest_first(make: LedgerFactory) -> None:
    """`due(now)` returns the open questions whose `due_at` is at or before `now`, soonest first, at most `limit`.

    A new question is due at once (when it was asked: its announcement must succeed); once announced it is
    due when `mark_announced` says (or never); a decided question is never due.
    """
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    # Asked far in the past so these are the soonest due rows of a shared store.
    base = T0 - timedelta(days=3650)
    first, second, announced, later, quiet, decided = (sample_envelope(thread_id=thread) for _ in range(6))
    opened = ledger.open(first, now=base)
    assert opened.record.due_at == format_rfc3339(base), f"a new question is due when asked, got {opened.record!r}"
    ledger.open(second, now=base + timedelta(minutes=1))
    for envelope in (announced, later, quiet, decided):
        ledger.open(envelope, now=base)
    ledger.mark_announced(thread, announced.question_id, due_at=format_rfc3339(base + timedelta(hours=2)))
    ledger.mark_announced(thread, later.question_id, due_at=format_rfc3339(base + timedelta(hours=5)))
    ledger.mark_announced(thread, quiet.question_id, due_at=None)
    ledger.decide(thread, decided.question_id, _decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=base)
    # A second announcement changes nothing: the first one set the question's next due time.
    ledger.mark_announced(thread, later.question_id, due_at=format_rfc3339(base))
    ledger.mark_announced(thread, decided.question_id, due_at=format_rfc3339(base))

    now = base + timedelta(hours=3)
    every = ledger.due(now, limit=1000)
    due = [r.question_id for r in every if r.thread_id == thread]
    expected = [first.question_id, second.question_id, announced.question_id]
    assert due == expected, f"expected {expected} (soonest first), got {due}"
    times = [r.due_at or "" for r in every]
    assert times == sorted(times), f"due must list the soonest first, got {times}"
    assert all(r.status is QuestionStatus.OPEN for r in every), "due must list open questions only"
    bounded = [r.question_id for r in ledger.due(now, limit=2)]
    assert bounded == [r.question_id for r in every[:2]], f"limit must keep the soonest two, got {bounded}"

    rows = {e.question_id: ledger.get(thread, e.question_id) for e in (announced, later, quiet, decided)}
    got = {question_id: (r.announced, r.due_at) if r else None for question_id, r in rows.items()}
    assert got[announced.question_id] == (True, format_rfc3339(base + timedelta(hours=2))), f"got {got}"
    assert got[later.question_id] == (True, format_rfc3339(base + timedelta(hours=5))), f"got {got}"
    assert got[quiet.question_id] == (True, None), f"announced with nothing due: never due, got {got}"
    decided_row = _row(ledger, thread, decided.question_id)
    assert decided_row.due_at is None, f"a decided question is not due: {decided_row!r}"
    assert decided_row.status is QuestionStatus.ANSWERED, f"mark_announced must not reopen: {decided_row!r}"

    # Deciding a due question takes it off the list (and leaves the shared store with nothing of ours due).
    for envelope in (first, second, announced, later, quiet):
        ledger.decide(thread, envelope.question_id, _decision(QuestionStatus.CANCELLED, None), now=base)
    left = [r.question_id for r in ledger.due(base + timedelta(days=1), limit=1000) if r.thread_id == thread]
    assert left == [], f"decided questions must leave the due list, got {left}"


def _row(ledger: Ledger, thread_id: str, question_id: str) -> QuestionRecord:
    record = ledger.get(thread_id, question_id)
    assert record is not None, f"question {question_id} must be readable"
    return record


def _after(result: AdvanceResult) -> QuestionRecord:
    assert result.record is not None, f"advance must return the question's row, got {result!r}"
    return result.record


def _vote(voter: str, action: str, answer_id: str | None = None, **extra: Any) -> Vote:
    return Vote(
        voter=f"issuer|{voter}",
        by=voter,
        answer={"action": action, **extra},
        answer_id=answer_id or f"a-{uuid.uuid4().hex}",
        at=format_rfc3339(T0),
        via="api",
        sender=f"sub-{voter}",
    )


def advance_is_a_compare_and_set(make: LedgerFactory) -> None:
    """`advance` writes only over the version it expects: a stale writer loses and reads the current row; a decided
    or unknown question never advances; the new due time is what `due` then sees."""
    ledger = make()
    envelope = sample_envelope(reminders=("PT10M", "PT20M"), asked_at=T0)
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    ledger.mark_announced(thread, question, due_at=format_rfc3339(T0 + timedelta(minutes=10)))
    reminded = Progress(reminders=1, notice=Notice.REMINDER, version=1)
    soon = format_rfc3339(T0 + timedelta(minutes=10))
    first = ledger.advance(thread, question, reminded, expected_version=0, due_at=soon, now=T0)
    assert first.won, f"advancing from version 0 must win, got {first!r}"
    assert _after(first).progress == reminded, f"got {first.record!r}"
    assert _after(first).due_at == soon, f"the new due time must be written, got {first.record!r}"

    stale = ledger.advance(thread, question, Progress(reminders=2, version=1), expected_version=0, due_at=None, now=T0)
    assert not stale.won, "a writer that expected an old version must lose"
    assert _after(stale).progress == reminded, f"the loser must get the current row, got {stale.record!r}"
    assert _row(ledger, thread, question).progress == reminded, "a losing advance must change nothing"

    try:
        ledger.advance(thread, question, Progress(version=5), expected_version=1, due_at=None, now=T0)
    except ArgumentError:
        pass
    else:
        raise AssertionError("a new version other than expected + 1 is a caller's bug and must raise ArgumentError")

    quiet = Progress(reminders=2, version=2)
    second = ledger.advance(thread, question, quiet, expected_version=1, due_at=None, now=T0)
    assert second.won, f"advancing from the current version must win, got {second!r}"
    assert _after(second).due_at is None, f"nothing due any more: {second.record!r}"
    assert _after(second).progress.notice is None, f"the notice must be cleared, got {second.record!r}"
    due = [r.question_id for r in ledger.due(T0 + timedelta(days=1), limit=1000)]
    assert question not in due, "a question advanced to nothing due must leave the due list"

    later = format_rfc3339(T0 + timedelta(minutes=20))
    third = ledger.advance(thread, question, Progress(reminders=2, version=3), expected_version=2, due_at=later, now=T0)
    assert third.won, f"got {third!r}"
    due = [r.question_id for r in ledger.due(T0 + timedelta(minutes=20), limit=1000)]
    assert question in due, "a question advanced to a due time is due from then"

    ledger.decide(thread, question, _decision(QuestionStatus.ANSWERED, {"action": "approve"}, "A"), now=T0)
    after = ledger.advance(thread, question, Progress(reminders=3, version=4), expected_version=3, due_at=later, now=T0)
    assert not after.won, "a decided question never advances"
    assert _after(after).status is QuestionStatus.ANSWERED, f"got {after.record!r}"
    assert _after(after).progress.version == 3, f"a decided question's progress must not change, got {after.record!r}"
    assert question not in [r.question_id for r in ledger.due(T0 + timedelta(days=1), limit=1000)]

    missing = sample_envelope()
    unknown = ledger.advance(
        missing.thread_id, missing.question_id, Progress(version=1), expected_version=0, due_at=later, now=T0
    )
    assert unknown == AdvanceResult(False, None), (
        f"advancing an unknown question must return (False, None): {unknown!r}"
    )
    assert ledger.get(missing.thread_id, missing.question_id) is None, "advance must never create a row"


def advance_with_a_decision_decides_in_the_same_write(make: LedgerFactory) -> None:
    """A vote that completes a quorum is written with the decision it makes: the question is answered, keeps its
    votes, is not due any more, and a later decision loses."""
    ledger = make()
    envelope = sample_envelope(quorum=2)
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    ana, bo = _vote("ana", "approve", "a-ana"), _vote("bo", "approve", "a-bo")
    one = Progress(votes=(ana,), version=1)
    first = ledger.advance(thread, question, one, expected_version=0, due_at=envelope.expires_at, now=T0)
    assert first.won, f"the first vote must be written, got {first!r}"
    assert _after(first).status is QuestionStatus.OPEN, "one vote of two decides nothing"

    both = Progress(votes=(ana, bo), version=2)
    answer = {"action": "approve", "votes": [ana.summary(), bo.summary()]}
    decision = Decision(QuestionStatus.ANSWERED, answer, "a-bo", "bo", sender="sub-bo", via="api")
    decided = ledger.advance(thread, question, both, expected_version=1, due_at=None, decision=decision, now=T0)
    assert decided.won, f"the deciding vote must win, got {decided!r}"
    record = _row(ledger, thread, question)
    got = (record.status, record.outcome, record.answer, record.answer_id, record.answered_by, record.via)
    assert got == (QuestionStatus.ANSWERED, QuestionStatus.ANSWERED, answer, "a-bo", "bo", "api"), f"got {got}"
    assert record.progress == both, f"the votes must be kept with the decision, got {record.progress!r}"
    assert record.due_at is None, f"a decided question is not due, got {record.due_at!r}"
    assert question not in [r.question_id for r in ledger.due(T0 + timedelta(days=30), limit=1000)]
    late = ledger.decide(thread, question, _decision(QuestionStatus.EXPIRED, {"action": "reject"}), now=T0)
    assert not late.won, f"a later decision must lose to the vote: {late!r}"
    assert late.record.answer_id == "a-bo", f"the loser must see the deciding vote's answer id: {late!r}"


def a_racing_decide_and_advance_have_one_winner(make: LedgerFactory) -> None:
    """Deciders and deciding votes racing on one question: exactly one of all of them wins."""
    ledger = make()
    envelope = sample_envelope(quorum=2)
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)

    def decide_or_vote(index: int) -> bool:
        decision = _decision(QuestionStatus.ANSWERED, {"action": "approve", "i": index}, f"a-{index}")
        if index % 2:
            return ledger.decide(thread, question, decision, now=T0).won
        votes = Progress(votes=(_vote(f"v{index}", "reject", f"a-{index}"),), version=1)
        return ledger.advance(thread, question, votes, expected_version=0, due_at=None, decision=decision, now=T0).won

    winners = _race(8, decide_or_vote)
    assert len(winners) == 1, f"expected exactly one winner, got {winners}"
    record = _row(ledger, thread, question)
    assert record.answer_id == f"a-{winners[0]}", f"the row must hold the winner's answer: {record!r}"
    expected_votes = 0 if winners[0] % 2 else 1
    assert len(record.progress.votes) == expected_votes, f"only a winning vote is recorded, got {record.progress!r}"


def progress_round_trips(make: LedgerFactory) -> None:
    """Reminders, escalation steps, a pending notice and votes (floats, nulls and all) read back as written."""
    ledger = make()
    envelope = sample_envelope(quorum=3)
    thread, question = envelope.thread_id, envelope.question_id
    opened = ledger.open(envelope, now=T0)
    assert opened.record.progress == Progress(), f"a new question has no progress, got {opened.record.progress!r}"
    fresh = _row(ledger, thread, question)
    assert fresh.progress == Progress(), f"a new row has no progress, got {fresh.progress!r}"
    quiet = Vote(
        "issuer|cy", None, {"action": "approve", "ratio": 0.1, "n": 0, "no": False}, "a-cy", "2026-09-11T09:05:00Z"
    )
    progress = Progress(
        reminders=2,
        escalations=1,
        notice=Notice.ESCALATED,
        votes=(_vote("ana", "approve", note="Zoë ✓", amount=410.25), quiet),
        version=1,
    )
    ledger.advance(thread, question, progress, expected_version=0, due_at=format_rfc3339(T0), now=T0)
    record = _row(ledger, thread, question)
    assert record.progress == progress, f"expected {progress!r}, got {record.progress!r}"
    assert record.progress.votes[1].action == "approve", f"got {record.progress.votes!r}"
    assert ledger.find(question) == record, "find must read the same progress as get"
    cleared = Progress(reminders=2, escalations=1, votes=progress.votes, version=2)
    ledger.advance(thread, question, cleared, expected_version=1, due_at=None, now=T0)
    record = _row(ledger, thread, question)
    assert record.progress == cleared, f"expected {cleared!r}, got {record.progress!r}"
    ledger.decide(thread, question, _decision(QuestionStatus.CANCELLED, None), now=T0)


def questions_lists_a_thread_by_status(make: LedgerFactory) -> None:
    """`questions(thread, status=...)` lists that thread's questions only, filtered by status."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    one, two = sample_envelope(thread_id=thread), sample_envelope(thread_id=thread)
    other = sample_envelope()
    for envelope in (one, two, other):
        ledger.open(envelope, now=T0)
    ledger.decide(thread, two.question_id, _decision(QuestionStatus.CANCELLED, None), now=T0)
    assert {r.question_id for r in ledger.questions(thread)} == {one.question_id, two.question_id}
    assert [r.question_id for r in ledger.questions(thread, status=QuestionStatus.OPEN)] == [one.question_id]
    assert ledger.thread_exists(thread), "a thread with questions exists"
    assert not ledger.thread_exists(f"thread-{uuid.uuid4().hex}"), "an unknown thread does not exist"


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


def oldest_open_is_the_earliest_asked_open_question(make: LedgerFactory) -> None:
    """`oldest_open()` is the open question recorded earliest; decided ones never count."""
    ledger = make()
    # Recorded before every other rule's rows (which use T0) so it is the oldest in a shared store.
    first = T0 - timedelta(days=7300)
    older, newer = sample_envelope(asked_at=first), sample_envelope(asked_at=first)
    ledger.open(older, now=first)
    ledger.open(newer, now=first + timedelta(seconds=1))
    oldest = ledger.oldest_open()
    assert oldest is not None, "expected an oldest open question"
    assert oldest.question_id == older.question_id, f"expected {older.question_id}, got {oldest.question_id}"
    ledger.decide(older.thread_id, older.question_id, _decision(QuestionStatus.ANSWERED, None), now=first)
    oldest = ledger.oldest_open()
    assert oldest is not None, "the newer question is still open"
    assert oldest.question_id == newer.question_id, f"a decided question still counted: got {oldest.question_id}"
    ledger.decide(newer.thread_id, newer.question_id, _decision(QuestionStatus.CANCELLED, None), now=first)


def _failure(thread_id: str, kind: str, target_id: str, message_id: str) -> ThreadFailure:
    return ThreadFailure(thread_id, FailureKind(kind), target_id, message_id, "ValueError", "2026-09-11T09:00:00Z")


def a_question_is_found_by_its_id_alone(make: LedgerFactory) -> None:
    """`find(question_id)` returns the question's row without its thread id; an unknown id is None."""
    ledger = make()
    envelope = sample_envelope()
    ledger.open(envelope, now=T0)
    found = ledger.find(envelope.question_id)
    assert found is not None, "an opened question must be found by its id"
    assert (found.thread_id, found.status) == (envelope.thread_id, QuestionStatus.OPEN), f"got {found!r}"
    assert ledger.find(f"q-{uuid.uuid4().hex}") is None, "an unknown id is not found"


def pages_list_a_status_soonest_deadline_first(make: LedgerFactory) -> None:
    """`page` walks every question of a status, soonest deadline first, filtered by due time and tag."""
    ledger = make()
    tag = uuid.uuid4().hex
    asked = [T0 + timedelta(minutes=minutes) for minutes in (3, 1, 2)]
    envelopes = [sample_envelope(asked_at=at, tags={"batch": tag}) for at in asked]
    for envelope in envelopes:
        ledger.open(envelope, now=T0)
    seen, cursor = [], None
    while True:
        page = ledger.page(QuestionStatus.OPEN, limit=2, cursor=cursor, tag=("batch", tag))
        seen += [r.question_id for r in page.records]
        cursor = page.cursor
        if cursor is None:
            break
    expected = [e.question_id for e in sorted(envelopes, key=lambda e: e.expires_at or "")]
    assert seen == expected, f"expected {expected}, got {seen}"
    due = ledger.page(QuestionStatus.OPEN, limit=10, due_before=envelopes[2].expires_at, tag=("batch", tag)).records
    assert [r.question_id for r in due] == expected[:2], "due_before keeps only those due by then"


def a_failed_resume_is_recorded_and_retried_once(make: LedgerFactory) -> None:
    """`mark_failed` moves an answered question to `failed` and marks the thread; one `begin_retry` takes it back."""
    ledger = make()
    envelope = sample_envelope()
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)
    ledger.decide(thread, question, _decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1"), now=T0)
    failure = _failure(thread, "answer", question, "a-1")
    ledger.mark_failed(failure)
    ledger.mark_failed(failure)  # a redelivery records the same failure again
    record = ledger.get(thread, question)
    assert record is not None, f"expected failed, got {record!r}"
    assert record.status is QuestionStatus.FAILED, f"expected failed, got {record!r}"
    assert record.outcome is QuestionStatus.ANSWERED, f"the outcome must be kept, got {record.outcome}"
    assert record.failure == failure, f"expected {failure!r}, got {record.failure!r}"
    assert ledger.thread_failure(thread) == failure, "the thread must say it is failed"
    assert failure in ledger.failures(limit=1000), "failures() must list the failed question"
    assert ledger.begin_retry(failure, "r-1", now=T0), "the first retry takes the row"
    assert ledger.begin_retry(failure, "r-1", now=T0), "the same retry again still holds it (a redelivery)"
    assert not ledger.begin_retry(failure, "r-2", now=T0), "another retry must not take it too"
    record = ledger.get(thread, question)
    assert record is not None, f"back to answered, got {record!r}"
    assert record.status is QuestionStatus.ANSWERED, f"back to answered, got {record!r}"
    assert ledger.mark_resumed(thread, question, now=T0), "a retried decision can resume"
    ledger.clear_failure(thread)
    assert ledger.thread_failure(thread) is None, "a cleared thread is not failed"
    assert failure not in ledger.failures(limit=1000), "a retried question is not listed as failed"


def a_failed_start_keeps_its_input_for_a_retry(make: LedgerFactory) -> None:
    """A failed start is listed, keeps its input, and a retry moves it back to running once."""
    ledger = make()
    thread, start_id = f"thread-{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    ledger.begin_start(thread, start_id, marker=None, now=T0)
    failure = _failure(thread, "start", start_id, start_id)
    ledger.mark_failed(failure, start_input={"order_id": "o-1", "amount": 900.5})
    start = ledger.start_record(thread, start_id)
    assert start is not None, f"expected a failed start, got {start!r}"
    assert start.state == "failed", f"expected a failed start, got {start!r}"
    assert start.input == {"order_id": "o-1", "amount": 900.5}, f"the input must be kept, got {start.input!r}"
    assert ledger.thread_failure(thread) == failure
    assert failure in ledger.failures(limit=1000), "failures() must list the failed start"
    assert ledger.questions(thread) == [], "a failed start is not a question"
    assert ledger.begin_retry(failure, "r-1", now=T0)
    assert not ledger.begin_retry(failure, "r-2", now=T0)
    start = ledger.start_record(thread, start_id)
    assert start is not None, f"got {start!r}"
    assert (start.state, start.retry_id) == ("running", "r-1"), f"got {start!r}"
    assert failure not in ledger.failures(limit=1000), "a retried start is not listed as failed"


def one_lease_per_thread(make: LedgerFactory) -> None:
    """A thread's lease has one holder until released or expired; it carries the thread's failure; it never
    makes an unknown thread exist."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, f"a free thread's lease must be granted, got {first!r}"
    assert first.failure is None, f"a free thread's lease must be granted, got {first!r}"
    assert ledger.acquire_lease(thread, "h-2", now=T0 + timedelta(seconds=30), seconds=60) is None, (
        "a held lease must refuse another holder"
    )
    assert not ledger.thread_exists(thread), "a lease alone does not make a thread exist"
    ledger.release_lease(thread, "h-2")  # not the holder: changes nothing
    assert ledger.acquire_lease(thread, "h-3", now=T0 + timedelta(seconds=31), seconds=60) is None
    ledger.release_lease(thread, "h-1")
    second = ledger.acquire_lease(thread, "h-2", now=T0 + timedelta(seconds=32), seconds=60)
    assert second is not None, "a released lease must be granted again"
    taken = ledger.acquire_lease(thread, "h-4", now=T0 + timedelta(seconds=200), seconds=60)
    assert taken is not None, "an expired lease (its holder died) must be taken over"
    ledger.release_lease(thread, "h-4")
    ledger.begin_start(thread, "s-1", marker=None, now=T0)
    failure = _failure(thread, "start", "s-1", "s-1")
    ledger.mark_failed(failure)
    leased = ledger.acquire_lease(thread, "h-5", now=T0 + timedelta(seconds=300), seconds=60)
    assert leased is not None, f"the lease must carry the failure, got {leased!r}"
    assert leased.failure == failure, f"the lease must carry the failure, got {leased!r}"


def racing_leases_have_one_holder(make: LedgerFactory) -> None:
    """Eight threads reaching for one thread's lease at once: exactly one holds it."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    barrier = threading.Barrier(8)
    got: list[str] = []
    lock = threading.Lock()

    def reach(holder: str) -> None:
        barrier.wait()
        if ledger.acquire_lease(thread, holder, now=T0, seconds=60) is not None:
            with lock:
                got.append(holder)

    racers = [threading.Thread(target=reach, args=(f"h-{n}",)) for n in range(8)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert len(got) == 1, f"expected one holder, got {got}"


def a_release_records_the_open_questions_the_next_lease_reads(make: LedgerFactory) -> None:
    """`release_lease(open_questions=...)` records the thread's open ids; the next lease carries them; a release
    without them, or by a delivery that no longer holds the lease, leaves them as they were."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    first = ledger.acquire_lease(thread, "h-1", now=T0, seconds=60)
    assert first is not None, "a free thread's lease must be granted"
    assert first.open_questions is None, f"nothing was recorded yet, got {first.open_questions}"
    ledger.release_lease(thread, "h-1", open_questions=("q-1", "q-2"))
    second = ledger.acquire_lease(thread, "h-2", now=T0, seconds=60)
    assert second is not None, "a released lease must be granted again"
    assert second.open_questions == ("q-1", "q-2"), f"expected the recorded ids, got {second.open_questions}"
    ledger.release_lease(thread, "h-9", open_questions=())  # not the holder: changes nothing
    ledger.release_lease(thread, "h-2")  # the agent did not run: the ids stay
    third = ledger.acquire_lease(thread, "h-3", now=T0, seconds=60)
    assert third is not None, "a released lease must be granted again"
    assert third.open_questions == ("q-1", "q-2"), f"expected the ids kept, got {third.open_questions}"
    ledger.release_lease(thread, "h-3", open_questions=())
    fourth = ledger.acquire_lease(thread, "h-4", now=T0, seconds=60)
    assert fourth is not None, "a released lease must be granted again"
    assert fourth.open_questions == (), f"expected no open question recorded, got {fourth.open_questions}"


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


REQUIRED: tuple[Callable[[LedgerFactory], None], ...] = (
    open_records_the_question,
    reopen_never_overwrites,
    first_decision_wins,
    a_decision_records_who_made_it_and_how,
    racing_decisions_have_one_winner,
    decide_unknown_question_raises_key_error,
    resumed_only_after_a_decision,
    due_returns_exactly_the_due_open_questions_soonest_first,
    advance_is_a_compare_and_set,
    advance_with_a_decision_decides_in_the_same_write,
    a_racing_decide_and_advance_have_one_winner,
    progress_round_trips,
    questions_lists_a_thread_by_status,
    a_start_is_recorded_once,
    oldest_open_is_the_earliest_asked_open_question,
    a_question_is_found_by_its_id_alone,
    pages_list_a_status_soonest_deadline_first,
    a_failed_resume_is_recorded_and_retried_once,
    a_failed_start_keeps_its_input_for_a_retry,
    one_lease_per_thread,
    racing_leases_have_one_holder,
    a_release_records_the_open_questions_the_next_lease_reads,
    a_release_leaves_a_note_the_next_lease_takes,
)
"""Every ledger passes these."""
