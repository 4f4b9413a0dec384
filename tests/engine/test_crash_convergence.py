"""Nothing runs twice: Lambda may die at any AWS call of a start or an answer, and redelivery converges.

Every AWS call the router makes goes through clients built from one boto3 Session. A botocore
`before-call` hook on that session counts the calls and raises at call N. For every N over a clean
run's calls, the message is handled with a crash at N, then redelivered with no crash (SQS's
at-least-once retry), and the thread must end exactly where a clean run ends: the same ledger rows,
the same graph values, the question announced at least once, and one refund paid.

A crash that lands on an announcer's call (SNS Publish) does not crash the invocation: announcers
never raise into the run. The message is then consumed, the question stays `announce_due`, and the
sweep announces it again; that path is taken here too.

Which crash points re-run a node body: LangGraph writes a task's result to the checkpointer after the
task returns, so a crash between the body's side effect and that write makes the redelivery run the
task again from its top (at-least-once, DESIGN.md "Nothing runs twice"). The only such points are
the checkpoint writes after `issue_refund`'s body ran and up to the write that records the `review`
task's result; those points are asserted exactly below, and the payment is keyed by an idempotency key
(`refund:<order_id>`), so a re-run body never pays twice.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import boto3
import pytest
import tests.agents.graphs as graphs
from tests.agents.graphs import body_runs, refunds_paid
from tests.support.aws_stack import HostStack

from agent_wait.common.times import utc_now
from agent_wait.engine import Router, Sweep
from agent_wait.engine.outcomes import OutcomeKind
from agent_wait.host import HostSettings, build_router, build_sweep


class InjectedCrashError(BaseException):
    """Lambda dying mid-invocation (timeout, out of memory, a host failure).

    A BaseException, as a process death is not an error the code could handle: the router must not treat
    it as the agent failing (which dead-letters a start), only converge on redelivery."""


def _label(operation: str, params: dict[str, Any]) -> str:
    """What one AWS call is for: a ledger write, a checkpoint write (LangGraph's), an announcement."""
    if operation == "dynamodb.BatchWriteItem":  # the saver's: several heads and payloads, which land together
        (requests,) = params["RequestItems"].values()
        return "+".join(_item_label(r["PutRequest"]["Item"]) for r in requests)
    if operation == "dynamodb.PutItem":
        return _item_label(params["Item"]) or operation
    return operation


def _item_label(item: dict[str, Any]) -> str:
    pk = str(item.get("PK", {}).get("S", ""))
    if pk.startswith("CHUNK_"):
        # CHUNK_<thread>#<ns>#<checkpoint> holds a checkpoint; ...#<task>#<idx> holds a task's writes.
        return "task-writes-payload" if pk.count("#") == 4 else "checkpoint-payload"
    if pk.startswith(("WRITES_", "CHECKPOINT_")):
        head = "task-writes-head" if pk.startswith("WRITES_") else "checkpoint-head"
        # A head holding its own payload (the saver's layout when both fit in one item) lands as one.
        return f"{head}-with-payload" if item.get("ref_loc", {}).get("S") == "INLINE" else head
    return ""


class CallHook:
    """Counts every AWS call made through the session; from call `crash_at` on, every call raises.

    A dead process makes no further calls, so once the crash point is reached nothing more reaches
    AWS (LangGraph may still be finishing work on its own threads when the exception surfaces).
    """

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.crash_at: int | None = None
        self._lock = threading.Lock()

    def __call__(self, event_name: str, params: dict[str, Any] | None = None, **_: Any) -> None:
        operation = ".".join(event_name.split(".")[1:3])
        with self._lock:
            self.calls.append(_label(operation, params or {}))
            number = len(self.calls)
        if self.crash_at is not None and number >= self.crash_at:
            raise InjectedCrashError(f"crash at AWS call {number} ({operation})")

    def arm(self, crash_at: int | None) -> None:
        """Start counting from zero; crash at call `crash_at` (None: never)."""
        with self._lock:
            self.calls = []
            self.crash_at = crash_at

    def disarm(self) -> None:
        with self._lock:
            self.crash_at = None


class Rig:
    """A router and a sweep on the moto stack, every AWS call through one hooked Session."""

    def __init__(self, host: HostStack) -> None:
        self.host = host
        self.hook = CallHook()
        session = boto3.Session(region_name="us-east-1")
        session.events.register("before-parameter-build.*.*", self.hook)
        self.router: Router = build_router(HostSettings.from_env("router"), session=session)
        self.sweep: Sweep = build_sweep(HostSettings.from_env("sweep"), session=session)
        # SQS redelivers a message only after its visibility timeout, which outlasts the lease a dead
        # invocation could not release: each crash moves the router's clock past that lease.
        self.offset = timedelta(0)
        self.router.clock = lambda: utc_now() + self.offset
        self.body_ran_at: list[int] = []
        graphs.ON_BODY.append(self._body_ran)

    def _body_ran(self, order_id: str) -> None:
        self.body_ran_at.append(len(self.hook.calls))

    def close(self) -> None:
        graphs.ON_BODY.remove(self._body_ran)

    def deliver(self, body: dict[str, Any], *, crash_at: int | None = None, dedup: str) -> bool:
        """Handle one message as the router Lambda would; True when the invocation crashed."""
        self.hook.arm(crash_at)
        try:
            self.router.handle(json.dumps(body), message_id=f"m-{dedup}", deduplication_id=dedup)
        except InjectedCrashError:
            self.offset += timedelta(seconds=self.router.lease_seconds + 1)
            return True
        finally:
            self.hook.disarm()
        return False

    def sweep_later(self) -> None:
        """A sweep run after the announce grace: re-announces whatever never got announced."""
        self.hook.arm(None)
        later = utc_now() + timedelta(minutes=5)
        self.sweep.clock = lambda: later
        self.sweep.run()


@pytest.fixture
def rig(host: HostStack) -> Any:
    made = Rig(host)
    try:
        yield made
    finally:
        made.close()


def _ledger_state(host: HostStack, thread_id: str, order_id: str) -> list[tuple[Any, ...]]:
    """The thread's ledger rows without ids or times: what must match a clean run."""
    return sorted(
        (
            record.status.value,
            record.outcome.value if record.outcome else None,
            json.dumps(record.answer, sort_keys=True),
            record.answered_by,
            json.dumps(record.envelope.question, sort_keys=True).replace(order_id, "<order>"),
            record.announced,
        )
        for record in host.ledger().questions(thread_id)
    )


def _graph_values(rig: Rig, thread_id: str, order_id: str) -> str:
    state = rig.router.adapter.graph.get_state({"configurable": {"thread_id": thread_id}})
    return json.dumps(state.values, sort_keys=True, default=str).replace(order_id, "<order>")


def _start(thread_id: str, order_id: str, amount: int) -> dict[str, Any]:
    return {"thread_id": thread_id, "input": {"order_id": order_id, "amount": amount}, "start_id": f"s-{thread_id}"}


def _announced_created(host: HostStack, question_id: str) -> int:
    return host.types_for(question_id).count("wait.created")


class Matrix:
    """The clean run of one message, then one crashed-and-redelivered run per AWS call of the clean run."""

    def __init__(self, rig: Rig, unique: str, prepare: Callable[[str, str], dict[str, Any]]) -> None:
        self.rig = rig
        thread, order = f"t-{unique}-clean", f"o-{unique}-clean"
        message = prepare(thread, order)
        rig.body_ran_at.clear()
        assert not rig.deliver(message, dedup=f"d-{thread}")
        self.clean_calls = list(rig.hook.calls)
        self.clean = self._end_state(thread, order)
        self.crashed: dict[int, bool] = {}
        self.reruns: dict[int, bool] = {}
        """Crash point -> True when the redelivery ran the refund body again."""
        for n in range(1, len(self.clean_calls) + 1):
            self._crash_at(n, prepare(f"t-{unique}-{n}", f"o-{unique}-{n}"), f"t-{unique}-{n}", f"o-{unique}-{n}")

    def _end_state(self, thread: str, order: str) -> tuple[Any, ...]:
        return (
            _ledger_state(self.rig.host, thread, order),
            _graph_values(self.rig, thread, order),
            refunds_paid(order),
        )

    def _crash_at(self, n: int, message: dict[str, Any], thread: str, order: str) -> None:
        rig = self.rig
        rig.body_ran_at.clear()
        crashed = rig.deliver(message, crash_at=n, dedup=f"d-{thread}")
        attempt, body_at = list(rig.hook.calls), (rig.body_ran_at[0] if rig.body_ran_at else None)
        if crashed:
            assert not rig.deliver(message, dedup=f"d-{thread}"), f"redelivery after a crash at call {n} failed"
        else:
            rig.sweep_later()  # the message was consumed; the sweep is what announces it again
        got = self._end_state(thread, order)
        assert got == self.clean, f"crash at call {n} ({self.clean_calls[n - 1]}): expected {self.clean}, got {got}"
        for record in rig.host.ledger().questions(thread):
            assert _announced_created(rig.host, record.question_id) >= 1, (
                f"crash at call {n}: question {record.question_id} was never announced"
            )
        runs = body_runs(order)
        assert refunds_paid(order) == self.clean[2], f"crash at call {n}: refunds paid {refunds_paid(order)}"
        # The body re-runs exactly when it ran before the crash and neither its task's writes nor the
        # checkpoint after its step had landed (LangGraph puts the two concurrently). DynamoDBSaver
        # ignores an item whose payload is missing, so each payload put (or head holding its payload) is a commit point.
        after_body = attempt[body_at : n - 1] if body_at is not None else []
        landed = any("payload" in call for call in after_body)
        ran_first = body_at is not None
        expected = 2 if ran_first and not landed else (1 if ran_first else min(1, self.clean[2]))
        assert runs == expected, (
            f"crash at call {n}: body ran {runs} times, expected {expected}; body after call {body_at}, "
            f"calls {attempt[: n - 1]}"
        )
        # LangGraph's own threads can still run a node after the crashing call (a body after call >= n);
        # a dead Lambda would not, so only a body that ran before the crash counts as a real re-run.
        expected_rerun = ran_first and body_at is not None and body_at < n and not landed
        self.crashed[n] = crashed
        self.reruns[n] = expected_rerun

    def rerun_points(self) -> list[str]:
        return [f"{n}:{self.clean_calls[n - 1]}" for n, rerun in self.reruns.items() if rerun]


def test_a_start_that_crashes_at_any_aws_call_converges_on_redelivery(rig: Rig, unique: str) -> None:
    # GIVEN a start that parks the refund graph on finance's question
    # WHEN Lambda dies at each AWS call of the start in turn and SQS redelivers the start
    matrix = Matrix(rig, unique, lambda t, o: _start(t, o, 900))

    # THEN every crash point converged on the clean run: one open question, announced, nothing paid
    assert [row[0] for row in matrix.clean[0]] == ["open"]
    assert matrix.clean[2] == 0
    # The start is finished by the lease's release, and the question put announced: neither makes a call of its own.
    assert len(matrix.clean_calls) >= 8
    assert any(matrix.crashed.values())
    assert matrix.rerun_points() == []


def test_an_auto_approved_start_that_crashes_anywhere_pays_once(rig: Rig, unique: str) -> None:
    # GIVEN a start under the auto-approve limit: the refund runs inside the start, no question
    # WHEN Lambda dies at each AWS call of the start in turn and SQS redelivers the start
    matrix = Matrix(rig, unique, lambda t, o: _start(t, o, 100))

    # THEN every crash point converged: no question, the graph finished, one refund paid; the body ran
    # again only for crashes between it and the landing of its task's writes
    assert matrix.clean[0] == []
    assert matrix.clean[2] == 1
    print("re-run points:", matrix.rerun_points(), "of", list(enumerate(matrix.clean_calls, 1)))
    assert 1 <= len(matrix.rerun_points()) <= 4, matrix.rerun_points()


def test_an_answer_that_crashes_at_any_aws_call_converges_on_redelivery(rig: Rig, unique: str) -> None:
    # GIVEN a parked refund for each crash point, and an approve for it
    def parked_then_answer(thread_id: str, order_id: str) -> dict[str, Any]:
        rig.hook.arm(None)
        outcome = rig.router.handle(json.dumps(_start(thread_id, order_id, 900)))
        assert outcome.kind is OutcomeKind.STARTED
        assert len(outcome.asked) == 1
        return {
            "thread_id": thread_id,
            "question_id": outcome.asked[0],
            "answer": {"action": "approve"},
            "answered_by": "finance@example.com",
            "answer_id": f"ans-{thread_id}",
        }

    # WHEN Lambda dies at each AWS call of the answer in turn and SQS redelivers the answer
    matrix = Matrix(rig, unique, parked_then_answer)

    # THEN every crash point converged: resumed with the approve, graph finished, exactly one refund paid
    rows = matrix.clean[0]
    assert [(row[0], row[1], row[3]) for row in rows] == [("resumed", "answered", "finance@example.com")]
    assert matrix.clean[2] == 1
    print("re-run points:", matrix.rerun_points(), "of", list(enumerate(matrix.clean_calls, 1)))
    assert 1 <= len(matrix.rerun_points()) <= 4, matrix.rerun_points()


def test_a_failing_resume_that_crashes_at_any_aws_call_converges_to_one_recorded_failure(rig: Rig, unique: str) -> None:
    # GIVEN a parked refund for each crash point whose node raises after paying, and an approve for it
    def failing_answer(thread_id: str, order_id: str) -> dict[str, Any]:
        rig.hook.arm(None)
        outcome = rig.router.handle(json.dumps(_start(thread_id, order_id, 900)))
        (question_id,) = outcome.asked
        graphs.FAIL_AFTER_REFUND.add(order_id)
        return {
            "thread_id": thread_id,
            "question_id": question_id,
            "answer": {"action": "approve"},
            "answer_id": f"ans-{thread_id}",
        }

    def end_state(thread_id: str, order_id: str) -> tuple[Any, ...]:
        failure = rig.host.ledger().thread_failure(thread_id)
        return (
            _ledger_state(rig.host, thread_id, order_id),
            (failure.kind.value, failure.error, failure.message_id.replace(thread_id, "<t>")) if failure else None,
            refunds_paid(order_id),
        )

    try:
        clean_thread, clean_order = f"t-{unique}-clean", f"o-{unique}-clean"
        message = failing_answer(clean_thread, clean_order)
        assert not rig.deliver(message, dedup=f"d-{clean_thread}")
        clean_calls = len(rig.hook.calls)
        clean = end_state(clean_thread, clean_order)
        assert [row[:2] for row in clean[0]] == [("failed", "answered")]
        assert clean[1] == ("answer", "RuntimeError", "ans-<t>")
        crashed_points = 0

        # WHEN Lambda dies at each AWS call of that answer in turn and SQS redelivers it
        for n in range(1, clean_calls + 1):
            thread_id, order_id = f"t-{unique}-{n}", f"o-{unique}-{n}"
            message = failing_answer(thread_id, order_id)
            crashed = rig.deliver(message, crash_at=n, dedup=f"d-{thread_id}")
            crashed_points += crashed
            if crashed:
                assert not rig.deliver(message, dedup=f"d-{thread_id}"), f"redelivery after a crash at {n} failed"

            # THEN every crash point ends where the clean run ends: one failure recorded on the row and the
            # thread, the refund paid once; the body ran again only when the crash hit before the failure
            # was recorded (at most once more), never on a redelivery after it
            got = end_state(thread_id, order_id)
            assert got == clean, f"crash at call {n}: expected {clean}, got {got}"
            assert body_runs(order_id) <= 2, f"crash at call {n}: the body ran {body_runs(order_id)} times"
        assert crashed_points >= 5
    finally:
        graphs.FAIL_AFTER_REFUND.clear()


# -- a graph whose branches run at once: the lease note must survive any crash ------------------------------


@pytest.fixture
def branch_rig(host: HostStack, monkeypatch: pytest.MonkeyPatch) -> Any:
    from agent_wait.contract.schema import Settings

    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.branch_graphs:build_three_branch_graph")
    made = Rig(host)
    try:
        yield made
    finally:
        made.close()


def _branch_end_state(rig: Rig, thread_id: str) -> tuple[Any, ...]:
    questions = rig.host.ledger().questions(thread_id)
    rows = sorted((r.status.value, r.outcome.value if r.outcome else None) for r in questions)
    state = rig.router.adapter.graph.get_state({"configurable": {"thread_id": thread_id}})
    return rows, state.values, state.next


def _branch_start(rig: Rig, thread_id: str, *, crash_at: int | None = None) -> bool:
    start = {"thread_id": thread_id, "input": {"log": []}, "start_id": f"s-{thread_id}"}
    return rig.deliver(start, crash_at=crash_at, dedup=f"s-{thread_id}")


def _branch_answer(rig: Rig, thread_id: str, *, crash_at: int | None = None) -> bool:
    (question,) = rig.host.ledger().questions(thread_id)
    body = {"thread_id": thread_id, "question_id": question.question_id, "answer": {"action": "approve"}}
    return rig.deliver({**body, "answer_id": f"a-{thread_id}"}, crash_at=crash_at, dedup=f"a-{thread_id}")


def test_a_parallel_graph_converges_after_a_crash_at_any_call_of_its_start_or_its_answer(
    branch_rig: Rig, unique: str
) -> None:
    from tests.agents import branch_graphs

    rig = branch_rig
    # GIVEN the clean lifecycle of prep → {a, b, c} → join, where b asks and a and c finish at once
    clean_thread = f"par-{unique}-clean"
    assert not _branch_start(rig, clean_thread)
    start_calls = len(rig.hook.calls)
    assert not _branch_answer(rig, clean_thread)
    answer_calls = len(rig.hook.calls)
    clean = _branch_end_state(rig, clean_thread)
    assert clean[0] == [("resumed", "answered")]
    assert clean[2] == ()

    # WHEN Lambda dies at each AWS call of the start, or of the answer, and SQS redelivers it
    for phase, calls in (("start", start_calls), ("answer", answer_calls)):
        for n in range(1, calls + 1):
            thread_id = f"par-{unique}-{phase}-{n}"
            # A crashed delivery is delivered again, as SQS does after the visibility timeout.
            if _branch_start(rig, thread_id, crash_at=n if phase == "start" else None):
                assert not _branch_start(rig, thread_id)
            if _branch_answer(rig, thread_id, crash_at=n if phase == "answer" else None):
                assert not _branch_answer(rig, thread_id)

            # THEN the thread ends as the clean one: the answer applied (never refused as not parked) and the graph
            # finished with every branch's result once. A crash may re-run the task it interrupted (at least once),
            # but the branches that finished during the start never run again while the answer is applied.
            assert _branch_end_state(rig, thread_id) == clean, f"crash at {phase} call {n}"
            runs = branch_graphs.runs(thread_id)
            if phase == "answer":
                assert (runs["a"], runs["c"]) == (1, 1), f"crash at answer call {n}: {runs}"
            assert max(runs.values()) <= 3, f"crash at {phase} call {n}: {runs}"
