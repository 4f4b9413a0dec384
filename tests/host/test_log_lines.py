"""One structured INFO line per message, with every field the runbooks search by (docs/operate.md, docs/host.md
"Operating it"): the router's per message, the answer API's per request, the sweep's per run. Every other routine
line is DEBUG, so what CloudWatch Logs ingests per lifecycle stays small (`bench/bench_lifecycle_calls.py` measures
the bytes); warnings and errors are not routine and stay where they were."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import tests.agents.graphs as graphs
from tests.support.api_events import http_event
from tests.support.aws_stack import (
    FakeLambdaContext,
    HostStack,
    answer_message,
    load_event,
    run_router,
    sqs_record,
    start_message,
)

from agent_wait.engine.outcomes import OUTCOME_LINE_FIELDS

READER = {"iss": "https://issuer.example.com", "sub": "u-reader", "email": "reader@example.com"}


@pytest.fixture
def printed() -> Iterator[io.StringIO]:
    """What the handlers' Powertools loggers print at INFO (the construct's default `log_level`), formatted as they
    print it. They share one stdlib logger (the service's); each took its level from LOG_LEVEL when first imported,
    maybe by an earlier test."""
    from agent_wait.host import api, router, sweep

    loggers = (router.logger, sweep.logger, api.logger)
    levels = [powertools.log_level for powertools in loggers]
    buffer = io.StringIO()
    copy = logging.StreamHandler(buffer)
    copy.setFormatter(router.logger.registered_formatter)
    shared = logging.getLogger(router.logger.service)
    shared.addHandler(copy)
    for powertools in loggers:
        powertools.setLevel(logging.INFO)
    try:
        yield buffer
    finally:
        shared.removeHandler(copy)
        for powertools, level in zip(loggers, levels, strict=True):
            powertools.setLevel(level)


def _read(printed: io.StringIO) -> list[dict[str, Any]]:
    """The log lines printed since the last read."""
    text = printed.getvalue()
    printed.seek(0)
    printed.truncate()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _at(level: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["level"] == level]


def test_the_router_logs_one_info_line_per_message_with_the_ids_and_outcome_the_runbooks_search_by(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, printed: io.StringIO
) -> None:
    thread = f"order-{unique}"
    _read(printed)
    # GIVEN a refund started on the entry queue
    start = sqs_record(start_message(thread, thread, start_id=f"s-{unique}"), group_id=thread)
    run_router(start, context=lambda_context)
    started = _at("INFO", _read(printed))
    (question,) = host.ledger().questions(thread)
    # WHEN finance approves, the approval is sent again under another answer id, and junk arrives on the thread
    approve = sqs_record(answer_message(thread, question.question_id, answer_id="a-1"), group_id=thread)
    run_router(approve, context=lambda_context)
    applied = _at("INFO", _read(printed))
    again = sqs_record(answer_message(thread, question.question_id, "reject", answer_id="a-2"), group_id=thread)
    run_router(again, context=lambda_context)
    refused = _at("INFO", _read(printed))
    junk = sqs_record("this is not json", group_id=thread)
    run_router(junk, context=lambda_context)
    dead_lettered = _at("INFO", _read(printed))

    # THEN each message has exactly one INFO line, saying what happened, by message id, thread and question
    assert [line["message"] for line in started] == ["start applied"]
    assert [line["message"] for line in applied] == ["answer applied"]
    assert [line["message"] for line in refused] == ["message refused: already_decided"]
    assert [line["message"] for line in dead_lettered] == ["message dead-lettered: not_json"]
    (s,), (a,), (r,), (d,) = started, applied, refused, dead_lettered
    assert {k: s[k] for k in ("outcome", "thread_id", "message_id", "asked", "start_id")} == {
        "outcome": "started",
        "thread_id": thread,
        "message_id": start["messageId"],
        "asked": [question.question_id],
        "start_id": f"s-{unique}",
    }
    assert {k: a[k] for k in ("outcome", "thread_id", "question_id", "message_id")} == {
        "outcome": "applied",
        "thread_id": thread,
        "question_id": question.question_id,
        "message_id": approve["messageId"],
    }
    assert (r["outcome"], r["reason"], r["question_id"], r["message_id"]) == (
        "refused",
        "already_decided",
        question.question_id,
        again["messageId"],
    )
    assert r["detail"], "a refusal says why in one sentence of ids"
    assert (d["outcome"], d["reason"], d["message_id"]) == ("dead_lettered", "not_json", junk["messageId"])
    # AND every field of the line is one the router declares, with none left empty
    for line in (s, a, r, d):
        fields = set(line) - {"level", "location", "message", "timestamp", "service", "sampling_rate"}
        fields -= {"cold_start", "function_name", "function_memory_size", "function_arn", "function_request_id"}
        assert fields <= {*OUTCOME_LINE_FIELDS, "start_id", "retry_id", "xray_trace_id"}, fields
        assert all(line[name] not in (None, "", []) for name in fields)


def test_a_failed_agent_still_logs_the_runbooks_warning_with_its_error_type_beside_the_one_info_line(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, printed: io.StringIO
) -> None:
    # GIVEN a start whose agent raises
    thread, order = f"order-{unique}", f"fail-{unique}"
    graphs.FAIL_ORDERS.add(order)
    _read(printed)
    try:
        start = sqs_record(start_message(thread, order), group_id=thread)
        run_router(start, context=lambda_context)
    finally:
        graphs.FAIL_ORDERS.discard(order)
    lines = _read(printed)
    # THEN the line operate.md sends the operator to is there at WARNING, with the error type and the ids
    (warning,) = [line for line in lines if line["message"] == "agent failed; the thread is held until retried"]
    assert warning["level"] == "WARNING"
    assert (warning["error"], warning["thread_id"], warning["message_id"]) == (
        "RuntimeError",
        thread,
        start["messageId"],
    )
    # AND the message's one INFO line says it was dead-lettered, and why
    assert [line["message"] for line in _at("INFO", lines)] == ["message dead-lettered: agent_failed"]


def test_the_answer_api_logs_one_info_line_per_request_with_its_status_and_reason(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, printed: io.StringIO
) -> None:
    from agent_wait.host import api

    thread = f"order-{unique}"
    run_router(sqs_record(start_message(thread, thread), group_id=thread), context=lambda_context)
    (question,) = host.ledger().questions(thread)
    api.reset()
    _read(printed)
    # WHEN a person reads the question, answers it, and answers it again with another answer
    path = f"/questions/{question.question_id}"
    for method, where, body in (
        ("GET", path, None),
        ("POST", f"{path}/answer", {"answer": {"action": "approve"}}),
        ("POST", f"{path}/answer", {"answer": {"action": "reject"}}),
    ):
        api.handler(http_event(method, where, body, claims=READER), lambda_context)
    requests = [line for line in _at("INFO", _read(printed)) if line["message"] == "request handled"]
    api.reset()
    # THEN each request has one INFO line with its method, path and status, and the refusal's reason
    assert [(line["method"], line["path"], line["status"], line.get("reason")) for line in requests] == [
        ("GET", path, 200, None),
        ("POST", f"{path}/answer", 200, None),
        ("POST", f"{path}/answer", 409, "already_decided"),
    ]
    assert all(line["seconds"] >= 0 for line in requests)


def test_the_sweep_logs_one_info_line_per_run_when_nothing_is_due(
    host: HostStack, lambda_context: FakeLambdaContext, printed: io.StringIO
) -> None:
    from agent_wait.host import sweep

    _read(printed)
    # WHEN the sweep runs with nothing due
    sweep.handler(load_event("scheduled_event.json"), lambda_context)
    # THEN it says so in one INFO line, with what it read and did
    (line,) = _at("INFO", _read(printed))
    assert line["message"] == "sweep done"
    assert (line["expired_sent"], line["reminded"], line["failed_steps"]) == (0, 0, [])
