"""`agent-wait extend` against the answer API served over real HTTP (`LocalApi`, its JWT authorizer and issuer) in
front of `create_app` on an in-memory ledger: what a person at the terminal reads, for a good and a refused move."""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_wait.cli import main
from agent_wait.cli._extend import extend, run_extend
from agent_wait.cli._target import CliError, Target
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import InMemoryLedger
from agent_wait.local.api_server import LocalApi
from agent_wait.policy import WaitPolicy
from agent_wait.policy.extension import Extension

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[LocalApi, InMemoryLedger]]:
    ledger = InMemoryLedger()
    service = AnswerService(ledger, InMemoryEntryQueue(), clock=lambda: T0)
    app = create_app(lambda: ApiContext(ledger=ledger, service=service, clock=lambda: T0))
    with LocalApi(lambda event: app.resolve(event, {})) as api:
        yield api, ledger


def _ask(ledger: InMemoryLedger) -> str:
    question_id = f"q-{uuid.uuid4().hex[:10]}"
    policy = WaitPolicy(timeout="P1D", extend=Extension(groups=["ops"], max_total="P2D"))
    question = Question(f"t-{question_id}", question_id, {"amount": 1}, policy, source={"function": "f"}, asked_at=T0)
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
    return question_id


def _target(api: LocalApi) -> Target:
    return Target(queue_url="http://unused", table="unused", source="test", api_url=api.url)


def test_extend_prints_the_new_deadline(
    served: tuple[LocalApi, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    api, ledger = served
    question_id = _ask(ledger)
    outputs = tmp_path / "cdk-outputs.json"
    stack = {"EntryQueueUrl": "https://sqs.us-east-1.amazonaws.com/1/q.fifo", "QuestionTableName": "questions"}
    outputs.write_text(json.dumps({"Orders": {**stack, "AnswerApiUrl": api.url + "/"}}))
    token = api.issuer.token("olga", ["ops"])
    assert main(["extend", question_id, "--by", "PT2H", "--token", token, "--outputs", str(outputs)]) == 0
    assert capsys.readouterr().out == (
        f"question {question_id} now expires at 2030-01-02T11:00:00Z; its reminders and escalation steps moved too "
        "(wait.extended goes out with the next sweep)\n"
    )
    until = extend(_target(api), question_id, {"until": "2030-01-03T09:00:00Z"}, token=token)
    assert until.startswith(f"question {question_id} now expires at 2030-01-03T09:00:00Z")


def test_a_refusal_says_why_and_a_bad_token_how_to_get_one(served: tuple[LocalApi, Any]) -> None:
    api, ledger = served
    question_id = _ask(ledger)
    with pytest.raises(CliError, match=r"was not extended \(extend_not_allowed\): only members of ops may extend"):
        extend(_target(api), question_id, {"by": "PT2H"}, token=api.issuer.token("carl", ["finance"]))
    with pytest.raises(CliError, match=r"was not extended \(beyond_maximum\): the policy lets the deadline move"):
        extend(_target(api), question_id, {"by": "P3D"}, token=api.issuer.token("olga", ["ops"]))
    with pytest.raises(CliError, match=r"the answer API refused the token .* agent-wait token --user"):
        extend(_target(api), question_id, {"by": "PT2H"}, token="not-a-token")


def test_the_command_needs_a_token_and_one_of_by_or_until(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AGENT_WAIT_TOKEN", raising=False)
    with pytest.raises(SystemExit):
        main(["extend", "q-1"])
    assert "one of the arguments --by --until is required" in capsys.readouterr().err
    args = argparse.Namespace(question_id="q-1", by="PT2H", until=None, token=None)
    with pytest.raises(CliError, match=r"extending needs a bearer token \(--token or AGENT_WAIT_TOKEN\)"):
        run_extend(Target(queue_url="http://unused", table="unused"), args)
