"""`agent-wait extend --by P999999999D` (or a huge `--until`) against the answer API over real HTTP (`LocalApi`):
the person at the terminal reads the API's refusal, `beyond_maximum` with the limit, never "the answer API failed
(HTTP 500)"; and the question's deadline stays where it was."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_wait.cli import main
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


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (
            ["--by", "P999999999D"],
            "by may be at most P3650D (about ten years), the furthest any policy lets a deadline move; "
            "got 'P999999999D'",
        ),
        (
            ["--until", "9999-12-31T23:59:59.5Z"],
            "the policy lets the deadline move at most P2D past 2030-01-02T09:00:00Z, to 2030-01-04T09:00:00Z; "
            "9999-12-31T23:59:59Z is later",
        ),
    ],
    ids=["by", "until"],
)
def test_extending_past_any_deadline_prints_the_limit_and_moves_nothing(
    served: tuple[LocalApi, InMemoryLedger],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    option: list[str],
    says: str,
) -> None:
    # GIVEN an open question a member of ops may extend by two days at most, and the stack's outputs
    api, ledger = served
    question_id = f"q-{uuid.uuid4().hex[:10]}"
    policy = WaitPolicy(timeout="P1D", extend=Extension(groups=["ops"], max_total="P2D"))
    question = Question(f"t-{question_id}", question_id, {"amount": 1}, policy, source={"function": "f"}, asked_at=T0)
    ledger.open(WaitEnvelope.create(question, now=T0), now=T0, unannounced=False)
    outputs = tmp_path / "cdk-outputs.json"
    stack = {"EntryQueueUrl": "https://sqs.us-east-1.amazonaws.com/1/q.fifo", "QuestionTableName": "questions"}
    outputs.write_text(json.dumps({"Orders": {**stack, "AnswerApiUrl": api.url + "/"}}))
    token = api.issuer.token("olga", ["ops"])

    # WHEN they run agent-wait extend with a move no deadline can hold
    code = main(["extend", question_id, *option, "--token", token, "--outputs", str(outputs)])

    # THEN the command fails with the API's reason and the limit, and the deadline stays
    assert code != 0
    assert f"question {question_id} was not extended (beyond_maximum): {says}" in capsys.readouterr().err
    record = ledger.find(question_id)
    assert record is not None
    assert record.expires_at == "2030-01-02T09:00:00Z"
