"""Rules of the `follow-ups` capability (`FollowUpLedger`): compare-and-set progress, what is due, the oldest."""

from __future__ import annotations

import uuid
from datetime import timedelta

from agent_wait.common.times import format_rfc3339
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError
from agent_wait.ledger import (
    AdvanceResult,
    Decision,
    Notice,
    Progress,
    Vote,
)
from agent_wait.testing.ledger_contract._support import (
    T0,
    LedgerFactory,
    advanced,
    make_decision,
    make_vote,
    race,
    row_of,
    sample_envelope,
)


def due_returns_exactly_the_due_open_questions_soonest_first(make: LedgerFactory) -> None:
    """`due(now)` returns the open questions whose `due_at` is at or before `now`, soonest first, at most `limit`.

    Nothing is lost: a new question, not yet announced, is due no later than it would be once announced (its
    first reminder, escalation step or deadline: `next_due(announced=True)`), so `due` finds it then even if
    its announcement never succeeded; once announced it is due when `mark_announced` says (or never); a decided
    question is never due.
    """
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    # Asked far in the past so these are the soonest due rows of a shared store.
    base = T0 - timedelta(days=3650)
    first = sample_envelope(thread_id=thread, asked_at=base)  # deadline: an hour after it was asked
    second = sample_envelope(thread_id=thread, asked_at=base + timedelta(minutes=1))
    announced, later, quiet, decided = (sample_envelope(thread_id=thread) for _ in range(4))
    opened = ledger.open(first, now=base)
    final = opened.record.next_due(announced=True)
    assert final == first.expires_at, f"the sample question's first due time is its deadline, got {final!r}"
    assert not opened.record.announced, f"a new question is not announced yet, got {opened.record!r}"
    due_at = opened.record.due_at or "never"
    assert due_at <= final, f"a new question is due no later than its first follow-up or deadline, got {due_at!r}"
    ledger.open(second, now=base + timedelta(minutes=1))
    for envelope in (announced, later, quiet, decided):
        ledger.open(envelope, now=base)
    ledger.mark_announced(thread, announced.question_id, due_at=format_rfc3339(base + timedelta(hours=2)))
    ledger.mark_announced(thread, later.question_id, due_at=format_rfc3339(base + timedelta(hours=5)))
    ledger.mark_announced(thread, quiet.question_id, due_at=None)
    ledger.decide(thread, decided.question_id, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=base)
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
    assert all(r.status is QuestionStatus.OPEN or r.notices or r.due_at for r in every), (
        "due lists open questions, and decided ones only while they owe notices or wait for their hand-over"
    )
    bounded = [r.question_id for r in ledger.due(now, limit=2)]
    assert bounded == [r.question_id for r in every[:2]], f"limit must keep the soonest two, got {bounded}"

    rows = {e.question_id: ledger.get(thread, e.question_id) for e in (announced, later, quiet, decided)}
    got = {question_id: (r.announced, r.due_at) if r else None for question_id, r in rows.items()}
    assert got[announced.question_id] == (True, format_rfc3339(base + timedelta(hours=2))), f"got {got}"
    assert got[later.question_id] == (True, format_rfc3339(base + timedelta(hours=5))), f"got {got}"
    assert got[quiet.question_id] == (True, None), f"announced with nothing due: never due, got {got}"
    decided_row = row_of(ledger, thread, decided.question_id)
    assert decided_row.due_at is None, f"a decided question is not due: {decided_row!r}"
    assert decided_row.status is QuestionStatus.ANSWERED, f"mark_announced must not reopen: {decided_row!r}"

    # Deciding a due question takes it off the list (and leaves the shared store with nothing of ours due).
    for envelope in (first, second, announced, later, quiet):
        ledger.decide(thread, envelope.question_id, make_decision(QuestionStatus.CANCELLED, None), now=base)
    left = [r.question_id for r in ledger.due(base + timedelta(days=1), limit=1000) if r.thread_id == thread]
    assert left == [], f"decided questions must leave the due list, got {left}"


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
    assert advanced(first).progress == reminded, f"got {first.record!r}"
    assert advanced(first).due_at == soon, f"the new due time must be written, got {first.record!r}"

    stale = ledger.advance(thread, question, Progress(reminders=2, version=1), expected_version=0, due_at=None, now=T0)
    assert not stale.won, "a writer that expected an old version must lose"
    assert advanced(stale).progress == reminded, f"the loser must get the current row, got {stale.record!r}"
    assert row_of(ledger, thread, question).progress == reminded, "a losing advance must change nothing"

    try:
        ledger.advance(thread, question, Progress(version=5), expected_version=1, due_at=None, now=T0)
    except ArgumentError:
        pass
    else:
        raise AssertionError("a new version other than expected + 1 is a caller's bug and must raise ArgumentError")

    quiet = Progress(reminders=2, version=2)
    second = ledger.advance(thread, question, quiet, expected_version=1, due_at=None, now=T0)
    assert second.won, f"advancing from the current version must win, got {second!r}"
    assert advanced(second).due_at is None, f"nothing due any more: {second.record!r}"
    assert advanced(second).progress.notice is None, f"the notice must be cleared, got {second.record!r}"
    due = [r.question_id for r in ledger.due(T0 + timedelta(days=1), limit=1000)]
    assert question not in due, "a question advanced to nothing due must leave the due list"

    later = format_rfc3339(T0 + timedelta(minutes=20))
    third = ledger.advance(thread, question, Progress(reminders=2, version=3), expected_version=2, due_at=later, now=T0)
    assert third.won, f"got {third!r}"
    due = [r.question_id for r in ledger.due(T0 + timedelta(minutes=20), limit=1000)]
    assert question in due, "a question advanced to a due time is due from then"

    ledger.decide(thread, question, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}, "A"), now=T0)
    after = ledger.advance(thread, question, Progress(reminders=3, version=4), expected_version=3, due_at=later, now=T0)
    assert not after.won, "a decided question never advances"
    assert advanced(after).status is QuestionStatus.ANSWERED, f"got {after.record!r}"
    assert advanced(after).progress.version == 3, f"a decided question's progress must not change, got {after.record!r}"
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
    ana, bo = make_vote("ana", "approve", "a-ana"), make_vote("bo", "approve", "a-bo")
    one = Progress(votes=(ana,), version=1)
    first = ledger.advance(thread, question, one, expected_version=0, due_at=envelope.expires_at, now=T0)
    assert first.won, f"the first vote must be written, got {first!r}"
    assert advanced(first).status is QuestionStatus.OPEN, "one vote of two decides nothing"

    both = Progress(votes=(ana, bo), version=2)
    answer = {"action": "approve", "votes": [ana.summary(), bo.summary()]}
    decision = Decision(QuestionStatus.ANSWERED, answer, "a-bo", "bo", sender="sub-bo", via="api")
    decided = ledger.advance(thread, question, both, expected_version=1, due_at=None, decision=decision, now=T0)
    assert decided.won, f"the deciding vote must win, got {decided!r}"
    record = row_of(ledger, thread, question)
    got = (record.status, record.outcome, record.answer, record.answer_id, record.answered_by, record.via)
    assert got == (QuestionStatus.ANSWERED, QuestionStatus.ANSWERED, answer, "a-bo", "bo", "api"), f"got {got}"
    assert record.progress == both, f"the votes must be kept with the decision, got {record.progress!r}"
    assert record.due_at is None, f"a decided question is not due, got {record.due_at!r}"
    assert question not in [r.question_id for r in ledger.due(T0 + timedelta(days=30), limit=1000)]
    late = ledger.decide(thread, question, make_decision(QuestionStatus.EXPIRED, {"action": "reject"}), now=T0)
    assert not late.won, f"a later decision must lose to the vote: {late!r}"
    assert late.record.answer_id == "a-bo", f"the loser must see the deciding vote's answer id: {late!r}"


def a_racing_decide_and_advance_have_one_winner(make: LedgerFactory) -> None:
    """Deciders and deciding votes racing on one question: exactly one of all of them wins."""
    ledger = make()
    envelope = sample_envelope(quorum=2)
    thread, question = envelope.thread_id, envelope.question_id
    ledger.open(envelope, now=T0)

    def decide_or_vote(index: int) -> bool:
        decision = make_decision(QuestionStatus.ANSWERED, {"action": "approve", "i": index}, f"a-{index}")
        if index % 2:
            return ledger.decide(thread, question, decision, now=T0).won
        votes = Progress(votes=(make_vote(f"v{index}", "reject", f"a-{index}"),), version=1)
        return ledger.advance(thread, question, votes, expected_version=0, due_at=None, decision=decision, now=T0).won

    winners = race(8, decide_or_vote)
    assert len(winners) == 1, f"expected exactly one winner, got {winners}"
    record = row_of(ledger, thread, question)
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
    fresh = row_of(ledger, thread, question)
    assert fresh.progress == Progress(), f"a new row has no progress, got {fresh.progress!r}"
    quiet = Vote(
        "issuer|cy", None, {"action": "approve", "ratio": 0.1, "n": 0, "no": False}, "a-cy", "2026-09-11T09:05:00Z"
    )
    progress = Progress(
        reminders=2,
        escalations=1,
        notice=Notice.ESCALATED,
        votes=(make_vote("ana", "approve", note="Zoë ✓", amount=410.25), quiet),
        version=1,
    )
    ledger.advance(thread, question, progress, expected_version=0, due_at=format_rfc3339(T0), now=T0)
    record = row_of(ledger, thread, question)
    assert record.progress == progress, f"expected {progress!r}, got {record.progress!r}"
    assert record.progress.votes[1].action == "approve", f"got {record.progress.votes!r}"
    assert ledger.find(question) == record, "find must read the same progress as get"
    cleared = Progress(reminders=2, escalations=1, votes=progress.votes, version=2)
    ledger.advance(thread, question, cleared, expected_version=1, due_at=None, now=T0)
    record = row_of(ledger, thread, question)
    assert record.progress == cleared, f"expected {cleared!r}, got {record.progress!r}"
    ledger.decide(thread, question, make_decision(QuestionStatus.CANCELLED, None), now=T0)


def a_decision_to_hand_over_stays_due_until_resumed(make: LedgerFactory) -> None:
    """A decision given `hand_over_at` (made where the agent cannot run: the answer API, a link) keeps the question
    due from then, decided, until `mark_resumed`; a vote that decides does the same; without it, never due."""
    ledger = make()
    thread = f"thread-{uuid.uuid4().hex[:12]}"
    base = T0 - timedelta(days=3650)  # the soonest due rows of a shared store
    door, quorum, queue = (sample_envelope(thread_id=thread, quorum=q) for q in (None, 1, None))
    for envelope in (door, quorum, queue):
        ledger.open(envelope, now=base)
        ledger.mark_announced(thread, envelope.question_id, due_at=None)
    at = format_rfc3339(base)
    decision = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-door", "ana", via="api", hand_over_at=at)
    assert ledger.decide(thread, door.question_id, decision, now=base).won
    vote = make_vote("bo", "approve", "a-bo")
    deciding = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-bo", "bo", via="api", hand_over_at=at)
    assert (
        advanced(
            ledger.advance(
                thread,
                quorum.question_id,
                Progress(votes=(vote,), version=1),
                expected_version=0,
                due_at=None,
                decision=deciding,
                now=base,
            )
        ).status
        is QuestionStatus.ANSWERED
    )
    ledger.decide(thread, queue.question_id, make_decision(QuestionStatus.ANSWERED, {"action": "approve"}), now=base)

    def due() -> list[str]:
        return sorted(
            r.question_id for r in ledger.due(base + timedelta(minutes=1), limit=1000) if r.thread_id == thread
        )

    assert due() == sorted([door.question_id, quorum.question_id]), "decisions to hand over are due, others not"
    assert row_of(ledger, thread, door.question_id).due_at == at, "due from its hand_over_at"
    for envelope in (door, quorum):
        assert ledger.mark_resumed(thread, envelope.question_id, now=base)
    assert due() == [], "a resumed question waits for no hand-over"
    assert row_of(ledger, thread, door.question_id).due_at is None


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
    ledger.decide(older.thread_id, older.question_id, make_decision(QuestionStatus.ANSWERED, None), now=first)
    oldest = ledger.oldest_open()
    assert oldest is not None, "the newer question is still open"
    assert oldest.question_id == newer.question_id, f"a decided question still counted: got {oldest.question_id}"
    ledger.decide(newer.thread_id, newer.question_id, make_decision(QuestionStatus.CANCELLED, None), now=first)


def a_question_put_announced_is_marked_back_when_its_announcement_fails(make: LedgerFactory) -> None:
    """Optional (a ledger that implements `mark_unannounced`): `open(unannounced=False)` puts the question announced
    and due where it would be once announced; `mark_unannounced` makes it unannounced and due at once, once; a
    decided question is never marked (and never due again)."""
    ledger = make()
    envelope = sample_envelope(reminders=("PT10M",), asked_at=T0)
    thread, question = envelope.thread_id, envelope.question_id
    opened = ledger.open(envelope, now=T0, unannounced=False)
    assert opened.created, f"a new question is put, got {opened!r}"
    assert opened.record.announced, f"put announced, got {opened.record!r}"
    first_reminder = format_rfc3339(T0 + timedelta(minutes=10))
    assert row_of(ledger, thread, question).due_at == first_reminder, "due at its first reminder, as if announced"
    assert [r.question_id for r in ledger.due(T0 + timedelta(minutes=1), limit=10) if r.thread_id == thread] == []

    later = T0 + timedelta(seconds=5)
    assert ledger.mark_unannounced(thread, question, now=later), "an announced open question is marked"
    marked = row_of(ledger, thread, question)
    assert (marked.announced, marked.due_at) == (False, format_rfc3339(later)), f"unannounced, due at once: {marked!r}"
    assert [r.question_id for r in ledger.due(later, limit=10) if r.thread_id == thread] == [question]
    assert not ledger.mark_unannounced(thread, question, now=later), "marked already: nothing written"
    ledger.mark_announced(thread, question, due_at=first_reminder)
    assert row_of(ledger, thread, question).announced, "the sweep's announcement takes the mark off"

    ledger.decide(thread, question, make_decision(QuestionStatus.CANCELLED, None), now=later)
    assert not ledger.mark_unannounced(thread, question, now=later), "a decided question is never marked"
    assert row_of(ledger, thread, question).due_at is None, "a decided question is never due again"
    unknown = sample_envelope(asked_at=T0)
    assert not ledger.mark_unannounced(unknown.thread_id, unknown.question_id, now=later), "an unknown question"


def open_questions_are_counted(make: LedgerFactory) -> None:
    """Optional (a ledger that implements `count_open`): `count_open()` counts every open question; a decision, of
    any outcome, takes its question off the count."""
    ledger = make()
    before = ledger.count_open()
    assert before is not None, "a ledger that implements count_open returns a number"
    asked = [sample_envelope(asked_at=T0) for _ in range(3)]
    for envelope in asked:
        ledger.open(envelope, now=T0)
    assert ledger.count_open() == before + 3, f"three more open questions, got {ledger.count_open()} after {before}"
    ledger.open(asked[0], now=T0)
    assert ledger.count_open() == before + 3, "opening a question again counts it once"
    for n, status in enumerate((QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.CANCELLED)):
        ledger.decide(asked[n].thread_id, asked[n].question_id, make_decision(status, None), now=T0)
        assert ledger.count_open() == before + 2 - n, f"a question decided {status.value} is no longer counted"


def the_open_count_is_claimed_by_one_run_and_kept(make: LedgerFactory) -> None:
    """Optional (a ledger that keeps its count, `open_count`): a count is claimed by compare-and-set on the kept
    count's version, so of two runs that read the same figure one counts; only the latest claim's count is recorded,
    and every run reads it back with the time it was claimed."""
    ledger = make()
    last = ledger.open_count()  # a shared store may hold an earlier rule's figure
    first, later = T0 + timedelta(days=400), T0 + timedelta(days=400, hours=2)

    claim = ledger.claim_open_count(now=first, last=last)
    assert claim is not None, "the first claim on the figure read wins"
    assert ledger.claim_open_count(now=first, last=last) is None, "a second claim on the same figure loses"
    assert claim.claimed_at == format_rfc3339(first)
    assert ledger.open_count() == claim, "the claim is kept, with the last count until a new one is recorded"

    assert ledger.record_open_count(claim, 5)
    kept = ledger.open_count()
    assert kept is not None
    assert (kept.open_questions, kept.counted_at) == (5, format_rfc3339(first)), f"the count as of its claim: {kept}"

    newer = ledger.claim_open_count(now=later, last=kept)
    assert newer is not None
    assert newer.version == kept.version + 1
    assert not ledger.record_open_count(claim, 7), "a count under a claim since superseded is not kept"
    assert ledger.open_count() == newer, "the newer claim keeps the last count recorded (5) until its own"
    assert newer.open_questions == 5
    assert ledger.record_open_count(newer, 6)
    assert (ledger.open_count() or newer).open_questions == 6
