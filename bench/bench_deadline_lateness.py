"""Deadline lateness: the minute sweep against precise-deadline schedules, and what the schedules cost a question.

Run: uv run --frozen python bench/bench_deadline_lateness.py [--questions 600]

Three figures, each printed with how it was made:

1. The minute sweep, through the real `Sweep`: `--questions` questions on an `InMemoryLedger`, each with a deadline
   at a random second within ten minutes; the sweep runs once a minute at a fixed second (as an EventBridge
   `rate(1 minute)` rule invokes it) on a simulated clock, and a question's lateness is the time of the run that
   sent its deadline answer minus its deadline. Each run's own duration (measured, in-process) is added.
2. Precise-deadline schedules on AWS, modelled from AWS's documentation: EventBridge Scheduler invokes a one-time
   schedule "with 60 second precision ... between 1:00:00 and 1:00:59" for a schedule at 1:00, so each wake-up
   falls uniformly within its time's minute; a wake-up before the deadline waits until it (`wait_until_due`),
   so lateness is the part after the deadline, and the wait is Lambda time paid for.
3. Precise-deadline schedules on the emulator, measured: the real `EventBridgeSchedules` puts each question's
   schedule into moto's Scheduler (in process, `mock_aws`), `ScheduleDelivery` fires it (moto never does), and
   `Sweep.run_question` sends the deadline answer. Lateness is from the deadline to the answer on the entry queue.
   The emulator's timing, not AWS's: it shows the path works within seconds, not what AWS delivers.

Then the cost per question: Scheduler's price per invocation (aws.amazon.com/eventbridge/pricing, US East, read
2026-12-04: the first 14 million scheduled invocations a month free, then $1.00 per million; creating and deleting
schedules is not priced), Lambda's (aws.amazon.com/lambda/pricing, x86: $0.20 per million requests,
$0.0000166667 per GB-second) for the sweep invocation each wake-up makes and for the waits of figure 2.
Figures, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_wait import WaitPolicy
from agent_wait.common.times import format_rfc3339, parse_rfc3339
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import InMemoryEntryQueue, Sweep
from agent_wait.engine.schedules import DeadlineSchedules
from agent_wait.ledger import Decision, InMemoryLedger

T0 = datetime(2030, 1, 1, 9, 0, 0, tzinfo=UTC)
SWEEP_SECOND = 17
"""The second of each minute the simulated `rate(1 minute)` rule invokes the sweep at (any fixed one will do)."""
SCHEDULER_PER_MILLION = 1.00
"""US East, past the free tier of 14 million scheduled invocations a month (read 2026-12-04)."""
LAMBDA_PER_MILLION_REQUESTS = 0.20
LAMBDA_PER_GB_SECOND = 0.0000166667
SWEEP_MEMORY_GB = 0.5
"""`SweepProps()`'s default memory, 512 MB."""
SWEEP_ARN = "arn:aws:lambda:us-east-1:1:function:sweep"
SWEEP_WAKE_SECONDS = 0.1
"""A woken sweep's own run for one question (one read, one SendMessage), rounded up."""


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"mean": statistics.fmean(ordered), "p50": pick(0.5), "p95": pick(0.95), "max": ordered[-1]}


def _row(name: str, values: list[float]) -> str:
    p = _percentiles(values)
    return f"| {name} | {p['mean']:.2f} | {p['p50']:.2f} | {p['p95']:.2f} | {p['max']:.2f} |"


def _ask(ledger: InMemoryLedger, n: int, deadline: datetime) -> str:
    timeout = max((deadline - T0).total_seconds(), 1.0)
    question = Question(
        f"t-{n}", f"q-{n}", {"n": n}, WaitPolicy(timeout=timeout), source={"function": "f"}, asked_at=T0
    )
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
    return f"q-{n}"


def sweep_lateness(questions: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """Figure 1: (lateness seconds per question, each run's measured seconds)."""
    ledger, queue = InMemoryLedger(), InMemoryEntryQueue()
    now = [T0]
    sweep = Sweep(ledger, queue, clock=lambda: now[0], limit=max(questions, 100))
    deadlines = {}
    for n in range(questions):
        question_id = _ask(ledger, n, T0 + timedelta(seconds=rng.uniform(1, 600)))
        record = ledger.find(question_id)
        deadlines[question_id] = parse_rfc3339(str(record.expires_at)) if record else T0
    late: list[float] = []
    runs: list[float] = []
    for minute in range(12):
        now[0] = T0 + timedelta(minutes=minute, seconds=SWEEP_SECOND)
        started = time.perf_counter()
        report = sweep.run()
        took = time.perf_counter() - started
        runs.append(took)
        late += [(now[0] - deadlines[q]).total_seconds() + took for q in report.expired_sent]
        for question_id in report.expired_sent:  # the router applies each deadline answer: expired, due no more
            decision = Decision(QuestionStatus.EXPIRED, None, f"deadline:{question_id}")
            ledger.decide(f"t-{question_id[2:]}", question_id, decision, now=now[0])
    return late, runs


def scheduler_on_aws(
    questions: int, rng: random.Random, *, longest_wait: float = 60.0, sweep_late: list[float] | None = None
) -> tuple[list[float], list[float]]:
    """Figure 2: (lateness, wait) seconds per question, under Scheduler's documented 60-second precision.

    A wake-up more than `longest_wait` early does nothing, and the minute sweep (a lateness drawn from `sweep_late`)
    expires the question instead."""
    late, waits = [], []
    for _ in range(questions):
        second = rng.uniform(0, 60)  # the deadline's second within its minute
        fired = rng.uniform(0, 60)  # Scheduler's invocation within that minute
        early = second - fired
        if early > longest_wait:
            late.append(rng.choice(sweep_late or [30.0]))
            waits.append(0.0)
            continue
        late.append(max(-early, 0.0) + SWEEP_WAKE_SECONDS)
        waits.append(max(early, 0.0))
    return late, waits


def scheduler_on_the_emulator(count: int) -> list[float]:
    """Figure 3: seconds from each deadline to its deadline answer on the entry queue, through moto's Scheduler."""
    import boto3
    from moto import mock_aws

    from agent_wait.aws.scheduler import EventBridgeSchedules
    from agent_wait.local.schedules import ScheduleDelivery

    with mock_aws():
        client = boto3.client("scheduler", region_name="us-east-1")
        ledger, queue = InMemoryLedger(), InMemoryEntryQueue()
        sweep = Sweep(ledger, queue)
        sent_at: dict[str, datetime] = {}

        def invoke(_arn: str, payload: dict[str, Any]) -> None:
            ids = payload["question"]
            for question_id in sweep.run_question(ids["thread_id"], ids["question_id"]).expired_sent:
                sent_at[question_id] = datetime.now(UTC)

        delivery = ScheduleDelivery(client, "bench", invoke)
        delivery.ensure_group()
        backend = EventBridgeSchedules("bench", SWEEP_ARN, "arn:aws:iam::1:role/r", client=client)
        schedules = DeadlineSchedules(backend)
        start = datetime.now(UTC)
        deadlines = {}
        for n in range(count):
            deadline = (start + timedelta(seconds=2 + n * 0.4)).replace(microsecond=0) + timedelta(seconds=1)
            timeout = (deadline - start).total_seconds()
            policy = WaitPolicy(timeout=timeout)
            question = Question(f"t-{n}", f"q-{n}", {"n": n}, policy, source={"function": "f"}, asked_at=start)
            record = ledger.open(WaitEnvelope.create(question, now=start), now=start, unannounced=False).record
            schedules.arrange(record)
            deadlines[record.question_id] = parse_rfc3339(str(record.expires_at))
        while len(sent_at) < count:
            if not delivery.wait_and_deliver(timeout=10):
                break
        return [(sent_at[q] - deadlines[q]).total_seconds() for q in sorted(sent_at)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--emulated", type=int, default=8, help="questions through the emulated Scheduler")
    args = parser.parse_args()
    rng = random.Random(30)
    sweep_late, runs = sweep_lateness(args.questions, rng)
    aws_late, waits = scheduler_on_aws(args.questions * 10, rng, sweep_late=sweep_late)
    emulated = scheduler_on_the_emulator(args.emulated)

    print(f"Deadline lateness in seconds ({format_rfc3339(datetime.now(UTC))}):\n")
    print("| path | mean | p50 | p95 | max |\n|---|---:|---:|---:|---:|")
    print(_row(f"minute sweep, real `Sweep` on a simulated minute ({len(sweep_late)} deadlines)", sweep_late))
    print(_row("precise deadlines on AWS, modelled from Scheduler's documented 60 s precision", aws_late))
    print(_row(f"precise deadlines on the emulator, measured ({len(emulated)} deadlines)", emulated))
    print(f"\nsweep run on an in-memory ledger: median {statistics.median(runs) * 1000:.1f} ms a run")
    wait = statistics.fmean(waits)
    print(f"an early wake-up's wait on AWS: mean {wait:.1f} s, p95 {_percentiles(waits)['p95']:.1f} s\n")
    print("How long an early wake-up may wait, on AWS (model): lateness against the wait's cost\n")
    print("| longest wait (s) | mean late | p95 late | mean wait | wait $ per million |\n|---:|---:|---:|---:|---:|")
    for longest in (0, 10, 20, 30, 60):
        late_w, waits_w = scheduler_on_aws(args.questions * 10, rng, longest_wait=longest, sweep_late=sweep_late)
        mean_wait = statistics.fmean(waits_w)
        dollars = mean_wait * SWEEP_MEMORY_GB * LAMBDA_PER_GB_SECOND * 1e6
        p = _percentiles(late_w)
        print(f"| {longest} | {p['mean']:.1f} | {p['p95']:.1f} | {mean_wait:.1f} | {dollars:.2f} |")
    print()

    scheduler = SCHEDULER_PER_MILLION
    requests = LAMBDA_PER_MILLION_REQUESTS
    run = SWEEP_WAKE_SECONDS * SWEEP_MEMORY_GB * LAMBDA_PER_GB_SECOND * 1e6
    waiting = wait * SWEEP_MEMORY_GB * LAMBDA_PER_GB_SECOND * 1e6
    each = scheduler + requests + run + waiting
    print("Cost of one fired schedule, per million (US East; Scheduler past its free 14 million a month):\n")
    print("| part | $ per million |\n|---|---:|")
    print(f"| Scheduler invocation | {scheduler:.2f} |")
    print(f"| sweep Lambda request | {requests:.2f} |")
    print(f"| sweep run, {SWEEP_WAKE_SECONDS} s at {SWEEP_MEMORY_GB * 1024:.0f} MB | {run:.2f} |")
    print(f"| early wake-up's wait, mean {wait:.1f} s at {SWEEP_MEMORY_GB * 1024:.0f} MB | {waiting:.2f} |")
    print(f"| **one fired schedule** | **{each:.2f}** |")
    print(
        "\nA question answered before its deadline fires nothing (its schedules are deleted: not priced); one that\n"
        f"expires fires one: ${each:.2f} per million such questions, plus one per reminder and escalation step sent."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
