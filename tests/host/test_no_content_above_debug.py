"""No question content above DEBUG, whatever goes wrong: a canary value in a start's input and in an
answer never reaches a log line at INFO or above, a dead letter's reason or detail, or an error the
router raises, when the agent raises with the value in its message (as real errors often do)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
import tests.agents.graphs as graphs
from tests.support.aws_stack import FakeLambdaContext, HostStack, answer_message, run_router, sqs_record, start_message

from agent_wait.engine.dead_letter import DETAIL_ATTRIBUTE, REASON_ATTRIBUTE

CANARY = "4111-1111-1111-1111"
"""Stands for a card number: it must appear at DEBUG at most."""


def _lines_above_debug(caplog: pytest.LogCaptureFixture, printed: str) -> list[str]:
    """Every log line at INFO or above, from the stdlib records and Powertools' JSON on stdout."""
    lines = [
        r.getMessage() + json.dumps(getattr(r, "__dict__", {}), default=str)
        for r in caplog.records
        if r.levelno >= logging.INFO
    ]
    for text in printed.splitlines():
        if text.startswith("{") and '"level":"DEBUG"' not in text:
            lines.append(text)
    return lines


@pytest.fixture
def handlers_log_debug() -> Iterator[None]:
    """The handlers' Powertools loggers at DEBUG: they took their level from LOG_LEVEL when first imported, which
    may have been an earlier test's doing."""
    from agent_wait.host import router, sweep

    loggers = (router.logger, sweep.logger)
    levels = [powertools.log_level for powertools in loggers]
    for powertools in loggers:
        powertools.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        for powertools, level in zip(loggers, levels, strict=True):
            powertools.setLevel(level)


@pytest.mark.usefixtures("handlers_log_debug")
def test_a_canary_in_the_input_and_the_answer_stays_below_info_when_the_agent_raises(
    host: HostStack,
    lambda_context: FakeLambdaContext,
    unique: str,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOG_LEVEL", "DEBUG")
    from tests.support.aws_stack import reset_handlers

    reset_handlers()
    caplog.set_level(logging.DEBUG)
    # GIVEN a start whose order id is the canary and whose agent raises quoting it
    failing = f"{CANARY}-start"
    graphs.FAIL_ORDERS.add(failing)
    try:
        thread_a = f"order-{unique}-a"
        run_router(sqs_record(start_message(thread_a, failing), group_id=thread_a), context=lambda_context)
    finally:
        graphs.FAIL_ORDERS.discard(failing)
    # AND a parked refund whose resume raises quoting the canary, answered with the canary in a note
    thread_b, order_b = f"order-{unique}-b", f"{CANARY}-resume"
    run_router(sqs_record(start_message(thread_b, order_b), group_id=thread_b), context=lambda_context)
    (question,) = host.ledger().questions(thread_b)
    graphs.FAIL_AFTER_REFUND.add(order_b)
    try:
        answer = answer_message(thread_b, question.question_id, note=CANARY)
        answer["answer"]["note"] = f"approved for card {CANARY}"
        run_router(sqs_record(answer, group_id=thread_b), context=lambda_context)
    finally:
        graphs.FAIL_AFTER_REFUND.discard(order_b)
    # AND a malformed answer carrying the canary
    bad = {"thread_id": thread_b, "question_id": question.question_id, "answer": {"card": CANARY, "n": 1e300}}
    run_router(sqs_record(bad, group_id=thread_b), context=lambda_context)

    # THEN the canary is in no line above DEBUG and in no dead letter's reason or detail
    leaked = [line for line in _lines_above_debug(caplog, capsys.readouterr().out) if CANARY in line]
    assert leaked == []
    dead = host.dead_letters()
    assert [m["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] for m in dead] == [
        "agent_failed",
        "agent_failed",
        "bad_answer",
    ]
    for message in dead:
        assert CANARY not in message["MessageAttributes"][DETAIL_ATTRIBUTE]["StringValue"]
    # AND at DEBUG the detail is there for whoever turned it on
    assert any(CANARY in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)


def test_a_key_of_the_input_that_may_be_content_never_reaches_a_dead_letters_detail(
    host: HostStack, lambda_context: FakeLambdaContext, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN a start whose input has the canary as a key, with a value JSON cannot carry (NaN): issue 25 saw
    # the dead letter's detail say "input.4111-1111-1111-1111 is nan" at WARNING
    thread_id = f"order-{unique}"
    body = f'{{"thread_id": "{thread_id}", "input": {{"{CANARY}": NaN}}, "start_id": "s-1"}}'
    caplog.set_level(logging.INFO)

    # WHEN the router dead-letters it
    run_router(sqs_record(body, group_id=thread_id), context=lambda_context)

    # THEN the detail says where the bad value is without the key, and no line above DEBUG holds the key
    [dead] = host.dead_letters()
    detail = dead["MessageAttributes"][DETAIL_ATTRIBUTE]["StringValue"]
    assert dead["MessageAttributes"][REASON_ATTRIBUTE]["StringValue"] == "bad_input"
    assert "input[<a key of 19 characters>]" in detail
    assert CANARY not in detail
    assert all(CANARY not in line for line in _lines_above_debug(caplog, ""))
