"""Passkeys on `AgentWait(passkeys=True)`: the answer API learns its own origin as the WebAuthn relying party and its
asset keeps `webauthn`; off, neither; passkeys without the answer API are refused saying why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import ISSUER, new_app, refund_agent

from agent_wait_cdk import AgentWait, AgentWaitPropsError, AnswerApiProps
from agent_wait_cdk.bundling.slim import left_out

API = "agent_wait.host.api.handler"


def _agent(stack: Stack, **props: Any) -> AgentWait:
    return refund_agent(stack, **props)


def _api_variables(**props: Any) -> Mapping[str, Any]:
    stack = Stack(new_app(), "Passkeys")
    _agent(stack, answer_api=True, answer_api_props=AnswerApiProps(jwt_issuer=ISSUER, jwt_audience=["a"]), **props)
    functions = Template.from_stack(stack).to_json()["Resources"].values()
    api = next(
        f["Properties"] for f in functions if f["Type"] == "AWS::Lambda::Function" and f["Properties"]["Handler"] == API
    )
    return api["Environment"]["Variables"]


def test_the_answer_api_is_its_own_relying_party_only_with_passkeys_on() -> None:
    origin = _api_variables(passkeys=True)["AGENT_WAIT_PASSKEY_ORIGIN"]
    # The HTTP API's default endpoint, `https://<id>.execute-api.<region>.<suffix>`: the origin the inbox is served at.
    assert "Fn::GetAtt" in str(origin)
    assert "ApiEndpoint" in str(origin)
    assert "AGENT_WAIT_PASSKEY_ORIGIN" not in _api_variables()


def test_passkeys_without_the_answer_api_are_refused_saying_why() -> None:
    with pytest.raises(AgentWaitPropsError) as raised:
        _agent(Stack(new_app(), "S"), passkeys=True)
    assert raised.value.problems == (
        "passkeys are registered and checked by the answer API, which is off; pass answer_api=True too",
    )


def test_only_the_answer_api_keeps_webauthn_and_only_with_passkeys_on() -> None:
    assert "webauthn" in left_out("api")
    assert "webauthn" not in left_out("api", ["passkey"])
    for function in ("router", "sweep"):
        assert "webauthn" in left_out(function, ["passkey"])
