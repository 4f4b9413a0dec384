"""The error tree: every error is a WaitError, subclasses the matching builtin, and keeps its facts."""

from __future__ import annotations

import re
import sys

import pytest

import agent_wait
from agent_wait import (
    ConfigurationError,
    EnvelopeError,
    MissingExtraError,
    PolicyError,
    QuestionTooLargeError,
    SignatureError,
    WaitError,
)
from agent_wait.errors import require_extra


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (PolicyError, ValueError),
        (EnvelopeError, ValueError),
        (QuestionTooLargeError, EnvelopeError),
        (SignatureError, ValueError),
        (ConfigurationError, ValueError),
        (MissingExtraError, ImportError),
    ],
)
def test_each_error_is_a_wait_error_and_the_matching_builtin(error: type[Exception], builtin: type[Exception]):
    assert issubclass(error, WaitError)
    assert issubclass(error, builtin)


def test_every_error_is_exported_from_the_package():
    for name in ("WaitError", "PolicyError", "EnvelopeError", "QuestionTooLargeError", "SignatureError"):
        assert name in agent_wait.__all__
    assert "ConfigurationError" in agent_wait.__all__
    assert "MissingExtraError" in agent_wait.__all__


def test_wait_error_keeps_its_message():
    err = WaitError("something went wrong")
    assert err.message == str(err) == "something went wrong"


def test_policy_error_keeps_field_and_value():
    err = PolicyError("timeout", "P1M", "timeout must be ...")
    assert (err.field, err.value, err.message) == ("timeout", "P1M", "timeout must be ...")


def test_question_too_large_error_keeps_size_and_limit():
    err = QuestionTooLargeError("too big", size=10, limit=5)
    assert (err.size, err.limit, err.message) == (10, 5, "too big")


def test_signature_error_keeps_its_reason():
    err = SignatureError("expired", "signed 900s ago")
    assert (err.reason, err.message) == ("expired", "signed 900s ago")


def test_configuration_error_reports_every_problem_at_once():
    # GIVEN two missing settings
    err = ConfigurationError(
        ["AGENT_WAIT_TABLE is not set; AgentWait sets it, or export it", "AGENT_WAIT_QUEUE_URL is not set"],
        variables=["AGENT_WAIT_TABLE", "AGENT_WAIT_QUEUE_URL"],
    )
    # THEN the message names both and the facts are kept
    assert (
        err.message == "AGENT_WAIT_TABLE is not set; AgentWait sets it, or export it; AGENT_WAIT_QUEUE_URL is not set"
    )
    assert err.problems == (
        "AGENT_WAIT_TABLE is not set; AgentWait sets it, or export it",
        "AGENT_WAIT_QUEUE_URL is not set",
    )
    assert err.variables == ("AGENT_WAIT_TABLE", "AGENT_WAIT_QUEUE_URL")


def test_missing_extra_error_names_the_package_and_the_extra_to_install():
    err = MissingExtraError("agent_wait.aws", "boto3", "aws")
    assert err.message == (
        "agent_wait.aws needs boto3, which is not installed; install it with: pip install 'agent-wait[aws]'"
    )
    assert (err.package, err.extra) == ("boto3", "aws")


def test_require_extra_raises_missing_extra_error_when_the_package_is_hidden(monkeypatch: pytest.MonkeyPatch):
    # GIVEN boto3 hidden (as if the extra were not installed)
    monkeypatch.setitem(sys.modules, "boto3", None)
    # WHEN a module checks for it
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[aws]'")) as err:
        require_extra("agent_wait.aws", "boto3", "aws")
    # THEN the cause is the original ImportError
    assert isinstance(err.value.__cause__, ImportError)


def test_require_extra_is_silent_when_the_package_is_there():
    require_extra("agent_wait", "json", "none")


def test_a_wait_error_can_be_caught_with_the_builtin_the_caller_already_handles():
    with pytest.raises(ValueError, match=re.escape("bad")):
        raise PolicyError("timeout", 0, "bad")
    with pytest.raises(ImportError, match=re.escape("agent-wait[langgraph]")):
        raise MissingExtraError("agent_wait.langgraph", "langgraph", "langgraph")
