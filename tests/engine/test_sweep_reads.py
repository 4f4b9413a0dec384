"""The sweep reads only what is due again: with nothing due, a run reads a few index items, however many are open.

The `OpenQuestions` gauge is counted rarely (a `Select=COUNT` of the open index, at most once per
`Sweep(count_open_every=...)`, two hours by default) and the last count is kept on one item of the question table,
which every run reads and emits. Reads are counted with botocore hooks on the session `build_sweep` builds the
sweep's clients from, as the Lambda builds them: every item a call read (a query's `ScannedCount`, which a
`Select=COUNT` query reads too, and each item a `GetItem` or `BatchGetItem` returned).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.aws_stack import REGION, HostStack

from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QUESTION_TABLE, QuestionStatus
from agent_wait.engine import InMemoryEntryQueue, RecordingMetrics, Sweep, SweepReport
from agent_wait.engine.metrics import Metric
from agent_wait.engine.sweep import COUNT_OPEN_EVERY
from agent_wait.errors import ArgumentError, LedgerUnavailableError
from agent_wait.host import HostSettings, build_sweep
from agent_wait.ledger import Decision, FollowUpLedger, InMemoryLedger, OpenCount
from agent_wait.policy import WaitPolicy

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
OPEN_INDEX = QUESTION_TABLE.indexes[2].name
WAITING = WaitPolicy(timeout="P3D", default={"action": "reject"}, reminders=["P1D"])
"""Nothing falls due for a day: every run below has nothing due."""


def ask(ledger: DynamoDbLedger, prefix: str, count: int) -> list[tuple[str, str]]:
    """`count` open, announced questions asked at T0, none due for a day; returns (thread_id, question_id)."""
    asked = []
    for n in range(count):
        thread_id, question_id = f"{prefix}-{n:03d}", f"{prefix}-q{n:03d}"
        question = Question(thread_id, question_id, {"n": n}, WAITING, asked_at=T0)
        opened = ledger.open(WaitEnvelope.create(question, now=T0), now=T0).record
        ledger.mark_announced(thread_id, question_id, due_at=opened.next_due(announced=True))
        asked.append((thread_id, question_id))
    return asked


@dataclass
class Reads:
    """Every item the sweep's DynamoDB calls read, by (operation, index), for the run being counted."""

    items: dict[tuple[str, str], int] = field(default_factory=dict)

    def register(self, session: Any) -> None:
        session.events.register("before-parameter-build.dynamodb.*", self._remember)
        session.events.register("after-call.dynamodb.*", self._count)

    def _remember(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["index"] = str(params.get("IndexName", "table"))

    def _count(self, event_name: str, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        if operation in ("Query", "Scan"):
            read = int(parsed.get("ScannedCount", len(parsed.get("Items", []))))  # COUNT reads what it counts
        elif operation == "GetItem":
            read = 1 if parsed.get("Item") else 0
        elif operation == "BatchGetItem":
            read = sum(len(items) for items in parsed.get("Responses", {}).values())
        else:
            return
        where = (operation, context.get("index", "table"))
        self.items[where] = self.items.get(where, 0) + read

    def total(self) -> int:
        return sum(self.items.values())

    def on_open_index(self) -> int:
        return sum(n for (_, index), n in self.items.items() if index == OPEN_INDEX)


@pytest.fixture
def counted(host: HostStack) -> tuple[Sweep, Reads]:
    """The sweep as the Lambda builds it, on the host stack, every item its DynamoDB calls read counted."""
    import boto3

    reads = Reads()
    session = boto3.Session(region_name=REGION)
    reads.register(session)
    return build_sweep(HostSettings.from_env("sweep"), session=session), reads


def run_at(sweep: Sweep, reads: Reads, moment: datetime) -> tuple[int, float | None]:
    """One run at `moment`: (items it read, the `OpenQuestions` it emitted, None when none)."""
    reads.items.clear()
    metrics = RecordingMetrics()
    sweep.metrics = metrics
    sweep.clock = lambda: moment
    report = sweep.run()
    assert report.failed_steps == (), report
    assert report.due_read == 0, "nothing is due in these tests"
    emitted = metrics.counts.get((Metric.OPEN_QUESTIONS.value, None))
    return reads.total(), emitted


def test_a_run_with_nothing_due_reads_a_few_items_however_many_questions_are_open(
    host: HostStack, counted: tuple[Sweep, Reads], unique: str
) -> None:
    # GIVEN 60 open questions, none due, and a sweep that has counted them once
    sweep, reads = counted
    ask(host.ledger(), f"few-{unique}", 60)
    counting, first = run_at(sweep, reads, T0 + timedelta(minutes=1))
    assert first == 60
    assert counting >= 60, "the first run counts every open question"
    shards = host.ledger().index_shards

    # WHEN the sweep runs again a minute later
    read, emitted = run_at(sweep, reads, T0 + timedelta(minutes=2))

    # THEN it read one key per shard of the open index (the oldest), that question's row and the last count,
    # not the 60 open questions; and it still emits the count
    assert reads.on_open_index() <= shards + 1, reads.items
    assert read <= shards + 3, reads.items
    assert emitted == 60

    # WHEN 60 more are asked, and the sweep runs again within the count's two hours
    ask(host.ledger(), f"more-{unique}", 60)
    read_with_more, emitted = run_at(sweep, reads, T0 + timedelta(minutes=3))

    # THEN it reads within the same bound, which depends on the shards, not on what is open (a shard the first 60
    # left empty may hold a key now); the gauge is the last count
    assert reads.on_open_index() <= shards + 1, reads.items
    assert read_with_more <= shards + 3, reads.items
    assert emitted == 60


def test_the_open_questions_are_counted_again_once_the_last_count_is_two_hours_old(
    host: HostStack, counted: tuple[Sweep, Reads], unique: str
) -> None:
    # GIVEN 30 open questions counted at T0 + 1 minute, then one of them decided
    sweep, reads = counted
    ledger = host.ledger()
    (decided_thread, decided_question), *_ = ask(ledger, f"again-{unique}", 30)
    assert run_at(sweep, reads, T0 + timedelta(minutes=1))[1] == 30
    ledger.decide(
        decided_thread,
        decided_question,
        Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1", "alice"),
        now=T0 + timedelta(minutes=5),
    )

    # WHEN the sweep runs just before the count is two hours old, then two hours after it
    _, before = run_at(sweep, reads, T0 + timedelta(hours=2, seconds=59))
    _, after = run_at(sweep, reads, T0 + timedelta(hours=2, minutes=1))

    # THEN the first still emits the last count, and the second counts again: 29 open
    assert before == 30
    assert after == 29
    assert reads.on_open_index() >= 29, reads.items


# -- crashes, retries and races, on the in-memory ledger with its counts counted ---------------------------------


class CountingLedger(InMemoryLedger):
    """Counts `count_open` calls (each reads every open question's index item on DynamoDB); can fail the next one, as
    a run that dies mid-count; can hand out a figure read before another run claimed (`stale`)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts = 0
        self.fail_next_count = False
        self.stale: list[OpenCount | None] = []

    def count_open(self) -> int:
        self.counts += 1
        if self.fail_next_count:
            self.fail_next_count = False
            raise LedgerUnavailableError("question table t: query failed (Throttling)")
        return super().count_open()

    def open_count(self) -> OpenCount | None:
        return self.stale.pop() if self.stale else super().open_count()


def memory_run(ledger: InMemoryLedger, moment: datetime) -> tuple[SweepReport, RecordingMetrics]:
    metrics = RecordingMetrics()
    return Sweep(ledger, InMemoryEntryQueue(), metrics=metrics, clock=lambda: moment).run(), metrics


def ask_in_memory(ledger: InMemoryLedger, count: int) -> None:
    for n in range(count):
        question = Question(f"t-{n}", f"q-{n}", {"n": n}, WAITING, asked_at=T0)
        ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)


def test_a_run_that_dies_while_counting_leaves_the_count_to_the_next_interval_and_keeps_the_last_one() -> None:
    # GIVEN 5 open questions counted at T0
    ledger = CountingLedger()
    ask_in_memory(ledger, 5)
    report, _ = memory_run(ledger, T0)
    assert (report.counted_open, report.open_questions, ledger.counts) == (True, 5, 1)

    # WHEN the next count, two hours on, dies part-way, and the sweep runs again a minute later
    ledger.fail_next_count = True
    died, died_metrics = memory_run(ledger, T0 + COUNT_OPEN_EVERY)
    retried, retried_metrics = memory_run(ledger, T0 + COUNT_OPEN_EVERY + timedelta(minutes=1))

    # THEN the failed count is a SweepErrors of its step, and the next run does not count again (the claim was made),
    # and emits the last count, as of T0
    assert died.failed_steps == ("oldest_open",)
    assert died_metrics.counts[(Metric.SWEEP_ERRORS.value, "oldest_open")] == 1
    assert (Metric.OPEN_QUESTIONS.value, None) not in died_metrics.counts
    assert (retried.counted_open, ledger.counts) == (False, 2)
    assert (retried.open_questions, retried.open_counted_at) == (5, "2026-09-11T09:00:00Z")
    assert retried_metrics.counts[(Metric.OPEN_QUESTIONS.value, None)] == 5

    # WHEN the interval has passed since the failed claim
    again, _ = memory_run(ledger, T0 + 2 * COUNT_OPEN_EVERY)

    # THEN it counts again
    assert (again.counted_open, again.open_questions, ledger.counts) == (True, 5, 3)


def test_of_two_runs_that_read_the_same_count_one_counts() -> None:
    # GIVEN 4 open questions, never counted, and two sweep runs that both read "never counted"
    ledger = CountingLedger()
    ask_in_memory(ledger, 4)
    ledger.stale = [None, None]

    # WHEN both run
    first, _ = memory_run(ledger, T0)
    second, second_metrics = memory_run(ledger, T0)

    # THEN the first claimed and counted; the second lost the claim, counted nothing and had no figure to emit
    assert (first.counted_open, first.open_questions) == (True, 4)
    assert (second.counted_open, second.open_questions) == (False, None)
    assert ledger.counts == 1
    assert (Metric.OPEN_QUESTIONS.value, None) not in second_metrics.counts
    assert second.failed_steps == ()


class KeepsNoCount(InMemoryLedger):
    """A ledger written before the kept count: it counts, but keeps no figure (`FollowUpLedger`'s defaults)."""

    open_count = FollowUpLedger.open_count
    claim_open_count = FollowUpLedger.claim_open_count
    record_open_count = FollowUpLedger.record_open_count


def test_a_ledger_that_keeps_no_count_is_counted_every_run() -> None:
    # GIVEN a ledger that counts but keeps no figure, with 3 open questions
    ledger = KeepsNoCount()
    ask_in_memory(ledger, 3)

    # WHEN the sweep runs twice, a minute apart
    runs = [memory_run(ledger, T0 + timedelta(minutes=n))[0] for n in range(2)]

    # THEN each run counted, as before the kept count
    assert [(r.counted_open, r.open_questions) for r in runs] == [(True, 3), (True, 3)]


def test_a_negative_count_interval_is_refused() -> None:
    with pytest.raises(ArgumentError, match="count_open_every must not be negative"):
        Sweep(InMemoryLedger(), InMemoryEntryQueue(), count_open_every=timedelta(minutes=-1))
