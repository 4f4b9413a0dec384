"""Time to answer per outcome and per a bounded set of tag values (`MetricTags`, `AGENT_WAIT_METRIC_TAGS`), the open
count, and the answer API's request metrics, on in-memory parts; the EMF the handlers print is checked on the emulator
(`tests/host/test_metric_values.py`)."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from tests.support.api_events import call

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import Settings
from agent_wait.engine import AnswerService, InMemoryEntryQueue, Metric, MetricTags, RecordingMetrics
from agent_wait.engine.metrics import EMITTED, NO_TAG, OTHER_TAG, DecisionOutcome, emitted, time_to_decision
from agent_wait.errors import ConfigurationError
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.settings import HostSettings
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy
from agent_wait.testing.ledger_contract import T0

TEAMS = '{"team": ["payments", "support"], "priority": ["high"]}'


def test_tag_values_fold_to_the_named_ones_other_or_none() -> None:
    tags = MetricTags.parse(TEAMS)
    assert tags.fold({"team": "payments", "priority": "high"}) == {"team": "payments", "priority": "high"}
    assert tags.fold({"team": "legal", "customer": "c-123"}) == {"team": OTHER_TAG, "priority": NO_TAG}
    assert MetricTags.parse(tags.to_setting()) == tags, "the setting a construct writes parses back to the same tags"
    assert MetricTags.parse(None).fold({"team": "payments"}) == {}, "unset: no tag dimension at all"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("team,priority", "must be a JSON object"),
        ("[]", "must be a JSON object"),
        ('{"service": ["a"]}', "not one of ['outcome', 'reason', 'service']"),
        ('{"team name": ["a"]}', "letters, digits"),
        ('{"team": []}', "must list its values"),
        ('{"team": "payments"}', "must list its values"),
        ('{"team": ["payments", ""]}', "must list its values"),
        ('{"team": ["other"]}', "leave them out"),
        ('{"a": ["1"], "b": ["1"], "c": ["1"], "d": ["1"]}', "at most 3"),
        ('{"team": ["v0","v1","v2","v3","v4","v5","v6","v7","v8","v9","v10"]}', "at most 10"),
        ('{"team": ["' + "x" * 256 + '"]}', "over 255"),
    ],
)
def test_an_unbounded_or_malformed_setting_is_refused_at_cold_start_with_what_to_do(text: str, says: str) -> None:
    env = {Settings.TABLE.value: "t", Settings.QUEUE_URL.value: "https://q", Settings.METRIC_TAGS.value: text}
    with pytest.raises(ConfigurationError) as caught:
        HostSettings.from_env("sweep", env)
    assert says in str(caught.value)
    assert Settings.METRIC_TAGS.value in caught.value.variables


def test_the_setting_reaches_the_host_settings() -> None:
    env = {Settings.TABLE.value: "t", Settings.QUEUE_URL.value: "https://q", Settings.METRIC_TAGS.value: TEAMS}
    assert HostSettings.from_env("sweep", env).metric_tags == MetricTags.parse(TEAMS)
    del env[Settings.METRIC_TAGS.value]
    assert HostSettings.from_env("sweep", env).metric_tags == MetricTags()


def test_time_to_decision_is_timed_by_outcome_and_by_each_tag_key() -> None:
    metrics = RecordingMetrics()
    time_to_decision(metrics, DecisionOutcome.EXPIRED, 90.0, {"team": "legal"}, MetricTags.parse(TEAMS))
    assert metrics.by_dimensions == {
        (Metric.TIME_TO_ANSWER, (("outcome", "expired"),)): [90.0],
        (Metric.TIME_TO_ANSWER, (("outcome", "expired"), ("team", "other"))): [90.0],
        (Metric.TIME_TO_ANSWER, (("outcome", "expired"), ("priority", "none"))): [90.0],
    }
    assert metrics.timings == {}, "only an answered question is timed under service alone, by the router"


def test_emitted_lists_every_dimension_set_and_the_tag_keys_only_when_named() -> None:
    service = frozenset({"service"})
    assert (Metric.OPEN_QUESTIONS.value, service) in EMITTED
    assert (Metric.REFUSED.value, service | {"reason"}) in EMITTED
    assert (Metric.TIME_TO_ANSWER.value, service | {"outcome"}) in EMITTED
    assert (Metric.ASKED.value, service | {"reason"}) not in EMITTED
    with_tags = emitted(MetricTags.parse(TEAMS)) - EMITTED
    assert with_tags == {
        (Metric.TIME_TO_ANSWER.value, service | {"outcome", "team"}),
        (Metric.TIME_TO_ANSWER.value, service | {"outcome", "priority"}),
    }


def test_the_in_memory_ledger_counts_open_questions() -> None:
    ledger = InMemoryLedger()
    assert ledger.count_open() == 0
    envelopes = [
        WaitEnvelope.create(Question(f"t-{n}", f"q-{n}", {"n": n}, policy=WaitPolicy(timeout="P1D")), now=T0)
        for n in range(3)
    ]
    for envelope in envelopes:
        ledger.open(envelope, now=T0)
    from agent_wait.contract.schema import QuestionStatus
    from agent_wait.ledger import Decision

    decision = Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1", "alice")
    ledger.decide("t-0", "q-0", decision, now=T0 + timedelta(minutes=1))
    assert ledger.count_open() == 2


def _api() -> tuple[Any, RecordingMetrics, str]:
    ledger = InMemoryLedger()
    question = Question("t-api", "q-api", {"function": "refund"}, policy=WaitPolicy(timeout="P3D"))
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0)
    metrics = RecordingMetrics()
    service = AnswerService(ledger, InMemoryEntryQueue(), clock=lambda: T0, metrics=metrics)
    context = ApiContext(ledger=ledger, service=service, clock=lambda: T0)
    return create_app(lambda: context), metrics, question.question_id


def test_the_answer_api_counts_every_request_by_status_class_and_times_it() -> None:
    app, metrics, question_id = _api()
    alice = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com"}
    assert call(app, "GET", f"/questions/{question_id}", claims=alice).status == 200
    assert call(app, "GET", "/questions/q-unknown", claims=alice).status == 404
    reply = call(app, "POST", f"/questions/{question_id}/answer", {"answer": {"action": "escalate"}}, claims=alice)
    assert reply.status == 422, reply.body
    assert metrics.counts[(Metric.API_REQUESTS, None)] == 3
    assert metrics.counts[(Metric.API_CLIENT_ERRORS, "404")] == 1
    assert metrics.counts[(Metric.API_CLIENT_ERRORS, "422")] == 1
    assert metrics.total(Metric.API_SERVER_ERRORS) == 0
    assert len(metrics.timings[Metric.API_LATENCY]) == 3
    # a time per request, in seconds (how long is the bench's business, never a bound here: a busy CI is slow)
    assert all(isinstance(seconds, float) and seconds >= 0 for seconds in metrics.timings[Metric.API_LATENCY])


def test_an_exception_no_route_handles_counts_as_a_5xx_and_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    app, metrics, question_id = _api()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store fell over")

    monkeypatch.setattr(InMemoryLedger, "find", broken)
    with pytest.raises(RuntimeError):
        call(app, "GET", f"/questions/{question_id}", claims={"iss": "https://i.example.com", "sub": "u"})
    assert metrics.counts[(Metric.API_SERVER_ERRORS, "500")] == 1
    assert metrics.counts[(Metric.API_REQUESTS, None)] == 1


def test_a_question_the_agent_moved_past_is_timed_as_cancelled_by_outcome_and_tag() -> None:
    from agent_wait.engine.questions import AskedQuestions

    ledger, metrics = InMemoryLedger(), RecordingMetrics()
    question = Question("t-c", "q-c", {"n": 1}, policy=WaitPolicy(timeout="P1D", tags={"team": "support"}))
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0)
    asked = AskedQuestions(
        ledger,
        metrics=metrics,
        log=logging.getLogger("test"),
        announce=None,
        reply_to=None,
        clock=lambda: T0 + timedelta(minutes=30),
        metric_tags=MetricTags.parse(TEAMS),
    )
    record = ledger.get("t-c", "q-c")
    assert record is not None
    asked.cancel(record)
    asked.cancel(record)  # a second cancel loses the decision and times nothing
    assert metrics.counts[(Metric.CANCELLED, None)] == 1
    assert metrics.by_dimensions == {
        (Metric.TIME_TO_ANSWER, (("outcome", "cancelled"),)): [1800.0],
        (Metric.TIME_TO_ANSWER, (("outcome", "cancelled"), ("team", "support"))): [1800.0],
        (Metric.TIME_TO_ANSWER, (("outcome", "cancelled"), ("priority", "none"))): [1800.0],
    }
