"""The ledger's and the AWS provider's errors sit in the one tree and keep the builtin their callers catch."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import (
    ArgumentError,
    AwsDeliveryError,
    LedgerCursorError,
    LedgerError,
    QuestionNotFoundError,
    WaitError,
)
from agent_wait.ledger import Decision, FailureKind, InMemoryLedger, ThreadFailure

T0 = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (QuestionNotFoundError, KeyError),
        (LedgerCursorError, ValueError),
        (ArgumentError, ValueError),
    ],
)
def test_each_new_error_is_a_wait_error_and_the_builtin_callers_catch(error: type[Exception], builtin: type[Exception]):
    assert issubclass(error, WaitError)
    assert issubclass(error, builtin)


def test_aws_delivery_error_is_a_wait_error_and_keeps_its_code_and_old_import_path():
    from agent_wait.aws._clients import AwsDeliveryError as ProviderAwsDeliveryError

    err = AwsDeliveryError("SNS Publish on t failed: ThrottlingException: slow down", code="ThrottlingException")
    assert ProviderAwsDeliveryError is AwsDeliveryError
    assert isinstance(err, WaitError)
    assert (err.code, err.message) == ("ThrottlingException", str(err))


def test_deciding_an_unknown_question_raises_question_not_found_naming_the_ids():
    # GIVEN an empty ledger / WHEN a decision names a question it never held
    ledger = InMemoryLedger()
    with pytest.raises(QuestionNotFoundError) as raised:
        ledger.decide("t-1", "q-1", Decision(QuestionStatus.ANSWERED, {"action": "approve"}, "a-1"), now=T0)
    # THEN the error is a KeyError and a LedgerError, with both ids and the old message
    assert isinstance(raised.value, KeyError)
    assert isinstance(raised.value, LedgerError)
    assert (raised.value.thread_id, raised.value.question_id) == ("t-1", "q-1")
    assert raised.value.message == "question q-1 on thread t-1 is not in the ledger"


def test_marking_an_unknown_question_failed_raises_question_not_found():
    failure = ThreadFailure("t-1", FailureKind.ANSWER, "q-1", "a-1", "ValueError", "2026-09-11T09:00:00Z")
    with pytest.raises(KeyError, match=re.escape("question q-1 on thread t-1 is not in the ledger")):
        InMemoryLedger().mark_failed(failure)


def test_a_cursor_the_ledger_did_not_make_raises_a_cursor_error_that_is_a_value_error():
    with pytest.raises(LedgerCursorError, match=re.escape("cursor 'x' is not one this ledger made")):
        InMemoryLedger().page(QuestionStatus.OPEN, limit=10, cursor="x")


def test_router_and_sweep_refuse_bad_arguments_with_argument_error():
    from agent_wait.engine import InMemoryDeadLetter, InMemoryEntryQueue, Router, Sweep

    with pytest.raises(ArgumentError, match=re.escape("lease_seconds must be > 0 and lease_wait >= 0; got 0, 1")):
        Router(object(), InMemoryLedger(), dead_letter=InMemoryDeadLetter(), lease_seconds=0, lease_wait=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("Sweep limit must be at least 1; got 0")):
        Sweep(InMemoryLedger(), InMemoryEntryQueue(), limit=0)
