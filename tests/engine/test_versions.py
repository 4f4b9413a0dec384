"""Resume against changed code (docs/versions.md): each question carries the version it was asked under, and the
router's every resume checks it against the graph running now.

Real small LangGraph graphs, two compiled versions sharing one InMemorySaver and one InMemoryLedger, driven
through the in-process Router: a compatible redeploy resumes; a redeploy without the waiting node, or with the
`@wait` function's parameters changed, fails the thread visibly (`version_changed`) and resumes after
`agent-wait retry` under a migration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from agent_wait import InMemoryAnnounce, WaitPolicy
from agent_wait.asking.versions import Migrated, Version, VersionChange, stamped_version
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import InMemoryDeadLetter, OutcomeKind, RecordingMetrics, Router
from agent_wait.errors import ArgumentError, PolicyError, VersionChangedError
from agent_wait.langgraph import LangGraphAdapter, ask, wait
from agent_wait.ledger import InMemoryLedger


class State(TypedDict, total=False):
    amount: int
    approved: Any
    refunded: bool
    audited: bool


REFUNDS: list[int] = []


def prepare(state: State) -> State:
    return {"amount": state.get("amount", 1)}


def approve(state: State) -> State:
    return {"approved": ask({"amount": state["amount"]})}


def review(state: State) -> State:  # the node `approve` became in the redeploy that removed it
    return {"approved": ask({"amount": state["amount"], "reviewed": True})}


def refund(state: State) -> State:
    REFUNDS.append(state["amount"])
    return {"refunded": True}


def audit(state: State) -> State:
    return {"audited": True}


def build(saver: InMemorySaver, *, waits_in: str = "approve", node: Callable[..., Any] = approve, extra: bool = False):
    builder = StateGraph(State)
    builder.add_node("prepare", prepare)
    builder.add_node(waits_in, node)
    builder.add_node("refund", refund)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", waits_in)
    builder.add_edge(waits_in, "refund")
    if extra:  # a compatible change: a node added after the one that waits
        builder.add_node("audit", audit)
        builder.add_edge("refund", "audit")
        builder.add_edge("audit", END)
    else:
        builder.add_edge("refund", END)
    return builder.compile(checkpointer=saver)


class Deploy:
    """One ledger, one saver, one dead-letter queue; `router(graph)` is the router after a (re)deploy."""

    def __init__(self) -> None:
        self.saver = InMemorySaver()
        self.ledger = InMemoryLedger()
        self.dead_letter = InMemoryDeadLetter()
        self.metrics = RecordingMetrics()
        self.announced = InMemoryAnnounce()

    def router(self, graph: Any, **adapter: Any) -> Router:
        return Router(
            LangGraphAdapter(graph, **adapter),
            self.ledger,
            dead_letter=self.dead_letter,
            metrics=self.metrics,
            announce=[self.announced],
        )

    def transitions(self, question_id: str) -> list[str]:
        return [str(t) for t, e in self.announced.events if e.question_id == question_id]


def _start(router: Router, thread_id: str, amount: int = 40) -> str:
    outcome = router.handle(
        json.dumps({"thread_id": thread_id, "input": {"amount": amount}}), message_id=f"s-{thread_id}"
    )
    assert outcome.kind is OutcomeKind.STARTED, outcome
    (question_id,) = outcome.asked
    return question_id


def _answer(router: Router, thread_id: str, question_id: str, action: str = "approve", answer_id: str = "a-1"):
    body = {"thread_id": thread_id, "question_id": question_id, "answer": {"action": action}, "answer_id": answer_id}
    return router.handle(json.dumps(body), message_id=answer_id)


def _retry(router: Router, thread_id: str, retry_id: str = "r-1"):
    return router.handle(json.dumps({"thread_id": thread_id, "retry_id": retry_id}), message_id=retry_id)


@pytest.fixture
def deploy() -> Deploy:
    REFUNDS.clear()
    return Deploy()


def test_a_question_is_stamped_with_the_graph_it_was_asked_under_and_the_stamp_survives_the_ledger(
    deploy: Deploy,
) -> None:
    # GIVEN a graph deployed as version 2026-12-04
    graph = build(deploy.saver)
    router = deploy.router(graph, version="2026-12-04")
    # WHEN it asks
    question_id = _start(router, "t-stamp")
    # THEN the question row's envelope carries the version: the graph's hash, the user's version and the node
    record = deploy.ledger.get("t-stamp", question_id)
    assert record is not None
    stamp = stamped_version(record.envelope.source)
    assert stamp == Version(graph=LangGraphAdapter(graph).deployed_version().graph, user="2026-12-04")
    assert re.fullmatch(r"[A-Za-z0-9_-]{6}", stamp.graph or "")
    # AND the wait.created envelope announced it
    (created,) = deploy.announced.of("wait.created")
    assert created.source == {"version": stamp.to_text()}
    assert created.source["version"] == f"{stamp.graph}::2026-12-04"  # graph:signature:user (ask has no signature)


def test_the_graph_hash_is_stable_and_changes_with_the_structure_only(deploy: Deploy) -> None:
    def version_of(graph: Any) -> str | None:
        return LangGraphAdapter(graph).deployed_version().graph

    same = version_of(build(deploy.saver)), version_of(build(InMemorySaver()))
    assert same[0] == same[1]
    assert version_of(build(deploy.saver, extra=True)) != same[0]
    assert version_of(build(deploy.saver, waits_in="review", node=review)) != same[0]


def test_a_compatible_redeploy_resumes(deploy: Deploy) -> None:
    # GIVEN a thread parked in `approve` under version 1
    question_id = _start(deploy.router(build(deploy.saver), version="1"), "t-compatible")
    # WHEN version 2 adds a node after it and the answer arrives
    outcome = _answer(deploy.router(build(deploy.saver, extra=True), version="2"), "t-compatible", question_id)
    # THEN the thread resumes into version 2's graph
    assert outcome.kind is OutcomeKind.APPLIED, outcome
    assert REFUNDS == [40]
    assert deploy.saver.get_tuple({"configurable": {"thread_id": "t-compatible"}}).checkpoint["channel_values"][
        "audited"
    ]
    assert deploy.metrics.counts[("VersionChanges", "resumed")] == 1


def test_a_redeploy_that_removed_the_waiting_node_fails_the_thread_visibly(deploy: Deploy) -> None:
    # GIVEN a thread parked in `approve`
    question_id = _start(deploy.router(build(deploy.saver)), "t-removed")
    # WHEN the redeploy renamed `approve` to `review` and the answer arrives
    router = deploy.router(build(deploy.saver, waits_in="review", node=review))
    outcome = _answer(router, "t-removed", question_id)
    # THEN nothing ran: the thread is failed `version_changed`, dead-lettered, announced and counted
    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, "version_changed"), outcome
    assert isinstance(outcome.error, VersionChangedError)
    assert "the node approve it waits in is not in the graph running now" in outcome.detail
    assert "agent-wait retry t-removed" in outcome.detail
    assert REFUNDS == []
    failure = deploy.ledger.thread_failure("t-removed")
    assert failure is not None
    assert failure.error == "VersionChangedError"
    assert [r.reason for r in deploy.dead_letter.records] == ["version_changed"]
    assert deploy.transitions(question_id) == ["created", "answered", "failed"]
    assert deploy.metrics.counts[("VersionChanges", "failed")] == 1
    record = deploy.ledger.get("t-removed", question_id)
    assert record is not None
    assert record.status is QuestionStatus.FAILED


def test_without_the_guard_langgraph_would_resume_the_removed_node_into_nothing(deploy: Deploy) -> None:
    """The fact the guard exists for: LangGraph resumes an orphaned thread silently, running nothing."""
    graph = build(deploy.saver)
    config = {"configurable": {"thread_id": "t-fact"}}
    parked = graph.invoke({"amount": 5}, config)
    (interrupt,) = parked["__interrupt__"]
    from langgraph.types import Command

    redeployed = build(deploy.saver, waits_in="review", node=review)
    assert redeployed.get_state(config).interrupts == ()
    result = redeployed.invoke(Command(resume={interrupt.id: {"action": "approve"}}), config)
    assert "__interrupt__" not in result
    assert not result.get("refunded")
    # AND the adapter still sees the thread waiting on it, so the guard gets to decide
    (pending,) = LangGraphAdapter(redeployed).pending("t-fact")
    assert pending.question_id == interrupt.id


def test_a_failed_thread_resumes_after_retry_under_a_migration(deploy: Deploy) -> None:
    # GIVEN a thread failed because its waiting node was removed
    question_id = _start(deploy.router(build(deploy.saver), version="1"), "t-migrate")
    v2 = build(deploy.saver, waits_in="review", node=review)
    assert _answer(deploy.router(v2, version="2"), "t-migrate", question_id).reason == "version_changed"
    # WHEN version 2 is redeployed with a migration, and an operator retries the thread
    seen: list[VersionChange] = []

    def migrate(change: VersionChange) -> Migrated:
        seen.append(change)
        return Migrated(update={"approved": change.answer}, goto="refund")

    outcome = _retry(deploy.router(v2, version="2", migration=migrate), "t-migrate")
    # THEN the migration received both versions, the state and the answer, and the thread went on as it said
    assert outcome.kind is OutcomeKind.RETRIED, outcome
    (change,) = seen
    assert (change.old.user, change.new.user, change.old.node) == ("1", "2", "approve")
    assert change.state["amount"] == 40
    assert change.answer == {"action": "approve"}
    assert change.problems
    assert not change.compatible
    assert REFUNDS == [40]
    assert deploy.ledger.thread_failure("t-migrate") is None
    record = deploy.ledger.get("t-migrate", question_id)
    assert record is not None
    assert record.status is QuestionStatus.RESUMED
    assert deploy.metrics.counts[("VersionChanges", "migrated")] == 1


def test_a_changed_wait_signature_fails_under_resume_and_a_same_one_resumes(deploy: Deploy) -> None:
    # GIVEN a node that calls a @wait function, parked on it
    def graph_with(fn: Callable[..., Any], *, extra: bool = False) -> Any:
        def pay(state: State) -> State:
            fn(state["amount"])
            return {"refunded": True}

        builder = StateGraph(State)
        builder.add_node("pay", pay)
        builder.add_edge(START, "pay")
        if extra:
            builder.add_node("audit", audit)
            builder.add_edge("pay", "audit")
            builder.add_edge("audit", END)
        else:
            builder.add_edge("pay", END)
        return builder.compile(checkpointer=deploy.saver)

    @wait(WaitPolicy())
    def issue_refund(amount: int) -> int:
        REFUNDS.append(amount)
        return amount

    question_id = _start(deploy.router(graph_with(issue_refund)), "t-signature")
    stamp = stamped_version(deploy.ledger.get("t-signature", question_id).envelope.source)  # type: ignore[union-attr]
    assert stamp is not None
    assert stamp.function == "issue_refund"
    assert stamp.signature is not None

    # WHEN the redeploy changes the function's parameters (and adds a node, so the graph changed)
    @wait(WaitPolicy())
    def issue_refund(amount: int, currency: str = "EUR") -> int:
        REFUNDS.append(amount)
        return amount

    outcome = _answer(deploy.router(graph_with(issue_refund, extra=True)), "t-signature", question_id)
    # THEN it fails visibly, naming the function
    assert outcome.reason == "version_changed", outcome
    assert "the @wait function issue_refund() takes other parameters than when it asked" in outcome.detail
    assert REFUNDS == []


def test_policy_fail_fails_even_a_compatible_redeploy(deploy: Deploy) -> None:
    def strict(state: State) -> State:
        return {"approved": ask({"amount": state["amount"]}, WaitPolicy(on_new_version="fail"))}

    question_id = _start(deploy.router(build(deploy.saver, node=strict)), "t-strict")
    outcome = _answer(deploy.router(build(deploy.saver, node=strict, extra=True)), "t-strict", question_id)
    assert outcome.reason == "version_changed", outcome
    assert "its policy says on_new_version='fail'" in outcome.detail
    assert REFUNDS == []


def test_the_hosts_default_applies_when_the_policy_says_nothing(deploy: Deploy) -> None:
    question_id = _start(deploy.router(build(deploy.saver)), "t-host-default")
    router = Router(
        LangGraphAdapter(build(deploy.saver, extra=True)),
        deploy.ledger,
        dead_letter=deploy.dead_letter,
        on_new_version="fail",
    )
    assert _answer(router, "t-host-default", question_id).reason == "version_changed"


def test_the_same_code_redeployed_resumes_without_asking_the_guard(deploy: Deploy) -> None:
    question_id = _start(deploy.router(build(deploy.saver), version="1"), "t-same")
    assert _answer(deploy.router(build(deploy.saver), version="1"), "t-same", question_id).kind is OutcomeKind.APPLIED
    assert not [key for key in deploy.metrics.counts if key[0] == "VersionChanges"]


# --- bad paths ----------------------------------------------------------------------------------------------------


def _failed_under(deploy: Deploy, thread_id: str) -> tuple[str, Any]:
    question_id = _start(deploy.router(build(deploy.saver)), thread_id)
    v2 = build(deploy.saver, waits_in="review", node=review)
    assert _answer(deploy.router(v2), thread_id, question_id).reason == "version_changed"
    return question_id, v2


def test_a_migration_that_raises_keeps_the_thread_failed_version_changed(deploy: Deploy) -> None:
    _, v2 = _failed_under(deploy, "t-raises")

    def migrate(change: VersionChange) -> Migrated:
        raise KeyError("secret-state-key")

    outcome = _retry(deploy.router(v2, migration=migrate), "t-raises")
    assert (outcome.kind, outcome.reason) == (OutcomeKind.DEAD_LETTERED, "version_changed")
    assert "the migration raised KeyError" in outcome.detail
    assert "secret-state-key" not in outcome.detail
    assert deploy.ledger.thread_failure("t-raises") is not None
    assert REFUNDS == []
    assert deploy.metrics.counts[("VersionChanges", "failed")] == 2


@pytest.mark.parametrize(
    ("migrated", "message"),
    [
        (None, "the migration did not say where the thread goes on: return Migrated(goto=..., update=...)"),
        (Migrated(update={"approved": True}), "the migration did not say where the thread goes on"),
        ({"goto": "refund"}, "the migration returned a dict"),
        (Migrated(goto="approve"), "the migration sends thread t-bad to node 'approve', which the graph running now"),
    ],
)
def test_a_migration_that_cannot_place_the_thread_is_refused_with_what_to_return(
    deploy: Deploy, migrated: Any, message: str
) -> None:
    _, v2 = _failed_under(deploy, "t-bad")
    outcome = _retry(deploy.router(v2, migration=lambda change: migrated), "t-bad")
    assert outcome.reason == "version_changed", outcome
    assert message in outcome.detail
    assert REFUNDS == []


def test_an_unknown_on_new_version_is_refused_where_it_is_written() -> None:
    with pytest.raises(PolicyError, match=re.escape("on_new_version must be one of ['resume', 'fail']; got 'resum'")):
        WaitPolicy(on_new_version="resum")
    with pytest.raises(PolicyError, match=re.escape("so a migration is registered with the code instead")):
        WaitPolicy(on_new_version=lambda change: None)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=re.escape("on_new_version must be one of ['resume', 'fail']; got 'skip'")):
        Router(
            LangGraphAdapter(build(InMemorySaver())),
            InMemoryLedger(),
            dead_letter=InMemoryDeadLetter(),
            on_new_version="skip",
        )


def test_the_adapter_refuses_a_bad_version_or_migration() -> None:
    graph = build(InMemorySaver())
    with pytest.raises(ArgumentError, match=re.escape("version must be a non-empty string such as '2026-12-04'")):
        LangGraphAdapter(graph, version="  ")
    with pytest.raises(ArgumentError, match=re.escape("migration must be a function of an agent_wait.asking.versions")):
        LangGraphAdapter(graph, migration="migrate")  # type: ignore[arg-type]


def test_on_new_version_rides_in_the_policy_and_the_envelopes_rules() -> None:
    policy = WaitPolicy(on_new_version="fail")
    assert WaitPolicy.from_dict(policy.to_dict()).on_new_version == "fail"
    assert policy.rules()["on_new_version"] == "fail"
    assert "on_new_version" not in WaitPolicy().rules()
    assert "on_new_version" not in WaitPolicy().to_dict()


def test_the_hosts_setting_is_read_at_cold_start_and_a_wrong_one_is_named() -> None:
    from agent_wait.contract.schema import Settings
    from agent_wait.errors import ConfigurationError
    from agent_wait.host import HostSettings

    environ = {
        Settings.GRAPH.value: "my_agent:graph",
        Settings.TABLE.value: "questions",
        Settings.CHECKPOINT_TABLE.value: "checkpoints",
        Settings.DLQ_URL.value: "https://sqs.us-east-1.amazonaws.com/1/dlq.fifo",
    }
    assert HostSettings.from_env("router", environ=environ).on_new_version == "resume"
    chosen = {**environ, Settings.ON_NEW_VERSION.value: "fail"}
    assert HostSettings.from_env("router", environ=chosen).on_new_version == "fail"
    wrong = {**environ, Settings.ON_NEW_VERSION.value: "skip"}
    with pytest.raises(ConfigurationError, match=re.escape("AGENT_WAIT_ON_NEW_VERSION: on_new_version must be one of")):
        HostSettings.from_env("router", environ=wrong)
