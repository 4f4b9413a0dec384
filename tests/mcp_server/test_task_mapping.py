"""The pure parts of the MCP server: the task ids, the question-to-task mapping, the named policies, the caller key of
an IAM-signed request, the local IAM authorizer's SigV4 check, and the wire shape of a task."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError, ConfigurationError, MissingExtraError
from agent_wait.ledger import FailureKind, InMemoryLedger, QuestionRecord, ThreadFailure
from agent_wait.mcp.ids import question_id_for, task_id_for, thread_id_for
from agent_wait.mcp.policies import McpPolicies
from agent_wait.mcp.task_state import TaskState, task_view
from agent_wait.policy import WaitPolicy

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)


def test_ids_are_derived_from_the_caller_and_the_key() -> None:
    keyed = task_id_for("ana@example.com", idempotency_key="k1")
    assert keyed == task_id_for("ana@example.com", idempotency_key="k1", request_id=9, arguments={"other": 1})
    assert keyed != task_id_for("bob@example.com", idempotency_key="k1"), "another caller never gets the same task"
    assert re.fullmatch(r"mcp-[0-9a-f]{40}", keyed)
    by_request = task_id_for("ana@example.com", request_id=1, arguments={"question": "A"})
    assert by_request == task_id_for("ana@example.com", request_id=1, arguments={"question": "A"})
    assert by_request != task_id_for("ana@example.com", request_id=1, arguments={"question": "B"})
    assert by_request != task_id_for("ana@example.com", request_id="1", arguments={"question": "A"})
    assert (question_id_for(keyed), thread_id_for(keyed)) == (keyed, f"mcp:{keyed}")
    with pytest.raises(ArgumentError, match="a task id needs an idempotency_key or the request's id"):
        task_id_for("ana@example.com")
    with pytest.raises(ArgumentError, match="a task belongs to a caller"):
        task_id_for(" ", idempotency_key="k")


def _opened() -> QuestionRecord:
    ledger = InMemoryLedger()
    policy = WaitPolicy(timeout="PT1H", default={"action": "reject"})
    question = Question("mcp:mcp-1", "mcp-1", "Refund?", policy, source={"resume": "polled", "asked_by": "ana"})
    return ledger.open(WaitEnvelope.create(question, now=T0), now=T0).record


def _decided(record: QuestionRecord, status: QuestionStatus, **fields: Any) -> QuestionRecord:
    return replace(record, status=status, outcome=status, decided_at="2026-12-08T09:30:00Z", **fields)


def test_each_question_state_maps_to_one_task_state() -> None:
    opened = _opened()
    view = task_view(opened, "mcp-1")
    assert (view.state, view.created_at, view.last_updated_at) == (TaskState.WORKING, opened.asked_at, opened.asked_at)
    assert "waiting for a person to answer; deadline " in view.status_message
    answered = _decided(opened, QuestionStatus.ANSWERED, answer={"action": "approve"}, answered_by="finn")
    view = task_view(replace(answered, status=QuestionStatus.RESUMED), "mcp-1")
    assert (view.state, view.answer, view.answered_by) == (TaskState.COMPLETED, {"action": "approve"}, "finn")
    assert view.last_updated_at == "2026-12-08T09:30:00Z"
    assert "approve" not in repr(view), "a repr leaves the answer out"
    view = task_view(_decided(opened, QuestionStatus.EXPIRED, answer={"action": "reject"}), "mcp-1")
    assert (view.state, view.answer, view.expired) == (TaskState.COMPLETED, {"action": "reject"}, True)
    cancelled = _decided(opened, QuestionStatus.CANCELLED, answered_by="ana", reason="changed my mind")
    view = task_view(cancelled, "mcp-1")
    assert (view.state, view.status_message) == (TaskState.CANCELLED, "cancelled by ana: changed my mind")
    withdrawn = _decided(opened, QuestionStatus.CANCELLED, answered_by="agent-wait:moved-on")
    assert task_view(withdrawn, "mcp-1").state is TaskState.CANCELLED
    failure = ThreadFailure("mcp:mcp-1", FailureKind.ANSWER, "mcp-1", "a1", "KeyError", "2026-12-08T09:31:00Z", 0)
    view = task_view(replace(answered, status=QuestionStatus.FAILED, failure=failure), "mcp-1")
    assert view.state is TaskState.FAILED
    assert "could not be applied (KeyError)" in view.status_message


def test_named_policies_round_trip_and_bad_settings_name_the_variable() -> None:
    named = McpPolicies({"refunds": WaitPolicy(timeout="P1D", tags={"team": "finance"})}, default="refunds")
    again = McpPolicies.from_json(named.to_json())
    assert again.names == ("refunds",)
    assert again.policies["refunds"].to_dict() == named.policies["refunds"].to_dict()
    assert McpPolicies.from_env({}) is None
    with pytest.raises(ConfigurationError, match="AGENT_WAIT_MCP_POLICIES must be JSON like"):
        McpPolicies.from_json("[]")
    with pytest.raises(ConfigurationError, match="policy 'x'"):
        McpPolicies.from_json('{"policies": {"x": {"timeout": "P1M"}}}')
    with pytest.raises(ConfigurationError, match="the default MCP policy 'nope' is not one of"):
        McpPolicies.from_json('{"policies": {"x": {}}, "default": "nope"}')
    with pytest.raises(ConfigurationError, match="at least one named policy"):
        McpPolicies({})
    with pytest.raises(ArgumentError, match=re.escape("name a policy: one of ['a', 'b']")):
        McpPolicies({"a": WaitPolicy(), "b": WaitPolicy()}).select(None, None)
    both = McpPolicies({"a": WaitPolicy(tags={"t": "x"}), "b": WaitPolicy(tags={"t": "x"})})
    with pytest.raises(ArgumentError, match=re.escape("select several policies ['a', 'b']")):
        both.select(None, {"t": "x"})


def test_an_iam_caller_is_its_principal_and_a_roles_sessions_are_one() -> None:
    from agent_wait.host.api._mcp import iam_caller_key

    role = "arn:aws:sts::111122223333:assumed-role/agent-runner"
    assert iam_caller_key({"userArn": f"{role}/one"}) == iam_caller_key({"userArn": f"{role}/two"}) == f"iam:{role}"
    assert iam_caller_key({"userArn": "arn:aws:iam::111122223333:user/bot"}) == "iam:arn:aws:iam::111122223333:user/bot"
    assert iam_caller_key({}) is None


def test_the_local_iam_authorizer_checks_the_signature_the_key_and_the_time() -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from agent_wait.local.sigv4 import LocalPrincipal, SignatureRefusedError, iam_identity

    known = [LocalPrincipal("AK1", "s3cret", "arn:aws:iam::111122223333:user/bot")]
    url = "http://127.0.0.1:9/mcp/iam"

    def signed(body: bytes, secret: str = "s3cret", key: str = "AK1") -> dict[str, str]:
        request = AWSRequest(method="POST", url=url, data=body, headers={"Content-Type": "application/json"})
        SigV4Auth(Credentials(key, secret), "execute-api", "us-east-1").add_auth(request)
        return {**dict(request.headers.items()), "Host": "127.0.0.1:9"}

    identity = iam_identity(known, method="POST", url=url, headers=signed(b"{}"), body=b"{}")
    assert (identity["userArn"], identity["accountId"]) == ("arn:aws:iam::111122223333:user/bot", "111122223333")
    cases = {
        "the request is not signed with SigV4": ({"Host": "x"}, b"{}", None),
        "the access key is not one this API knows": (signed(b"{}", key="AK2"), b"{}", None),
        "the signature does not match the request": (signed(b"{}"), b"{ }", None),
        "more than 15 minutes from now": (signed(b"{}"), b"{}", datetime.now(UTC) + timedelta(minutes=16)),
    }
    for reason, (headers, body, now) in cases.items():
        with pytest.raises(SignatureRefusedError, match=re.escape(reason)):
            iam_identity(known, method="POST", url=url, headers=headers, body=body, now=now)
    assert "s3cret" not in repr(known[0])


def test_a_task_on_the_wire_always_carries_ttl_ms() -> None:
    from agent_wait.mcp.tasks import CreateTaskResult, task_wire

    wire = task_wire(CreateTaskResult(task_id="mcp-1", status="working", created_at="a", last_updated_at="a"))
    assert wire == {
        "taskId": "mcp-1",
        "status": "working",
        "createdAt": "a",
        "lastUpdatedAt": "a",
        "resultType": "task",
        "ttlMs": None,
    }


def test_the_mcp_modules_name_their_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "agent_wait.mcp.tasks" or m.startswith("mcp")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[mcp]'")):
        import agent_wait.mcp.tasks  # noqa: F401
