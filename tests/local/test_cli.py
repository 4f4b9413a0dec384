"""`agent-wait start`, `questions` and `answer` against the local stack, and their one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_wait.cli import main
from agent_wait.cli._target import Target


@pytest.fixture
def target(world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Target:
    """The CLI pointed at the running local stack the way `agent-wait dev` points it: .agent-wait/local.json."""
    monkeypatch.chdir(tmp_path)
    local = world.local
    found = Target(queue_url=local.queue_url, table=local.table, endpoint_url=local.endpoint_url, region="us-east-1")
    found.save()
    return found


def _open_question(world: Any, thread: str) -> str:
    for row in _rows(world):
        if row["thread_id"] == thread and row["status"] == "open":
            return row["question_id"]
    raise AssertionError(f"no open question on {thread}")


def _rows(world: Any) -> list[dict[str, Any]]:
    from agent_wait.cli._commands import list_questions

    local = world.local
    return list_questions(Target(local.queue_url, local.table, local.endpoint_url, "us-east-1"), None)


def test_start_questions_and_answer_drive_the_agent(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    # GIVEN a start sent with the CLI
    assert main(["start", thread, "--input", json.dumps({"order_id": thread, "amount": 900})]) == 0
    assert f"start sent for thread {thread}" in capsys.readouterr().out
    world.pump()
    question = _open_question(world, thread)
    # WHEN the questions are listed and the open one approved
    assert main(["questions", "--status", "open", "--json"]) == 0
    # stdout also carries the handlers' Powertools log lines; the CLI's rows start with thread_id
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"thread_id"')]
    assert any(row["question_id"] == question and row["tags"] == {"approver_group": "finance"} for row in listed)
    assert main(["answer", question, "approve", "--note", "within budget", "--by", "cli@example.com"]) == 0
    assert f"answer 'approve' sent on the entry queue for question {question}" in capsys.readouterr().out
    world.pump()
    # THEN the agent resumed and the refund ran once
    row = world.row(thread, question)
    assert (row["status"], row["answer"], row["answered_by"]) == (
        "resumed",
        {"action": "approve", "note": "within budget"},
        "cli@example.com",
    )
    assert world.refunds(thread) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["start", "t-1", "--input", "{amount: 9}"],
            "--input is not JSON: Expecting property name enclosed in double quotes",
        ),
        (
            ["answer", "no-such-question", "approve"],
            "no question 'no-such-question'; list them with: agent-wait questions",
        ),
        (
            ["questions", "--status", "pending"],
            "--status must be one of ['open', 'answered', 'expired', 'cancelled', 'withdrawn', 'resumed', 'failed']",
        ),
    ],
)
def test_bad_input_is_one_line_that_says_what_to_do(
    target: Target, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-wait: ")
    assert message in err
    assert err.count("\n") == 1, f"expected one line, got {err!r}"


def test_an_action_the_question_does_not_allow_is_refused_before_sending(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    assert main(["answer", question, "escalate"]) == 1
    assert (
        f"action 'escalate' is not allowed for question {question}; use one of: approve, reject"
        in capsys.readouterr().err
    )
    assert world.pump() == [], "nothing may be sent for a refused action"


def test_answering_a_question_that_is_no_longer_open_says_so(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    world.answer(thread, question, "reject")
    assert main(["answer", question, "approve"]) == 1
    assert f"question {question} is already resumed; only open questions take answers" in capsys.readouterr().err


def test_without_a_stack_the_cli_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENT_WAIT_QUEUE_URL", raising=False)
    monkeypatch.delenv("AGENT_WAIT_TABLE", raising=False)
    assert main(["questions"]) == 1
    assert "no stack to talk to: run `agent-wait dev` in another terminal" in capsys.readouterr().err


def test_outputs_file_of_a_deployed_stack_is_read(tmp_path: Path) -> None:
    from agent_wait.cli._target import resolve_target

    outputs = tmp_path / "cdk-outputs.json"
    outputs.write_text(
        json.dumps(
            {
                "RefundAgentStack": {
                    "AgentWaitEntryQueueUrlC29C3D17": "https://sqs.eu-west-1.amazonaws.com/1/entry.fifo",
                    "AgentWaitQuestionTableName6952B715": "questions",
                }
            }
        )
    )
    found = resolve_target(str(outputs))
    assert (found.queue_url, found.table, found.region) == (
        "https://sqs.eu-west-1.amazonaws.com/1/entry.fifo",
        "questions",
        "eu-west-1",
    )
    outputs.write_text("{}")
    with pytest.raises(Exception, match="has no AgentWait outputs"):
        resolve_target(str(outputs))


def test_the_cli_in_another_terminal_needs_no_aws_credentials_for_the_local_emulator(
    world: Any, target: Target, tmp_path: Path
) -> None:
    # GIVEN a terminal with no AWS settings at all, in the folder where `agent-wait dev` runs
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AGENT_WAIT_"))}
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    env["AWS_EC2_METADATA_DISABLED"] = "true"  # no instance role to fall back on either
    cli = str(Path(sys.executable).with_name("agent-wait"))

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [cli, *argv], check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    thread = f"order-nocreds-{uuid.uuid4().hex[:6]}"
    # WHEN it starts a refund, lists the question and answers it
    started = run("start", thread, "--input", json.dumps({"order_id": thread, "amount": 900}))
    assert (started.returncode, started.stderr) == (0, ""), started.stderr
    world.pump()
    question = _open_question(world, thread)
    listed = run("questions", "--status", "open")
    assert listed.returncode == 0, listed.stderr
    assert question in listed.stdout
    answered = run("answer", question, "approve")
    assert answered.returncode == 0, answered.stderr
    world.pump()
    # THEN the agent resumed, and no command needed a credential
    assert world.row(thread, question)["status"] == "resumed"


def test_a_start_sent_twice_with_one_start_id_starts_once_and_keeps_its_question(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    argv = ["start", thread, "--input", json.dumps({"order_id": thread, "amount": 900}), "--start-id", "ticket-4471"]
    # WHEN a start is sent, then sent again (a retried command)
    assert main(argv) == 0
    world.pump()
    question = _open_question(world, thread)
    assert main(argv) == 0
    world.pump()
    # THEN the first question is still the one open, nothing was cancelled, and nothing ran twice
    rows = [row for row in _rows(world) if row["thread_id"] == thread]
    assert [(row["question_id"], row["status"]) for row in rows] == [(question, "open")]
    assert world.refunds(thread) == 0


def test_an_empty_json_listing_prints_no_line_a_parser_would_choke_on(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    # A script polls `questions --json` until its start has asked: an empty answer must parse too.
    from agent_wait.contract.schema import QUESTION_TABLE

    empty = f"empty-{uuid.uuid4().hex[:8]}"
    world.local.client("dynamodb").create_table(**QUESTION_TABLE.create_table_request(empty))
    Target(target.queue_url, empty, target.endpoint_url, "us-east-1").save()
    capsys.readouterr()
    assert main(["questions", "--status", "cancelled", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [line for line in out.splitlines() if line.startswith(("{", "no "))] == []
    assert "no cancelled questions" in err


def test_questions_show_prints_what_is_asked_the_policy_and_the_decision(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    capsys.readouterr()
    # WHEN an open question is shown
    assert main(["questions", "show", question]) == 0
    shown = capsys.readouterr().out
    # THEN it says what is asked and the rules, before anyone decides
    assert f"question {question}  thread={thread}  status=open" in shown
    assert '"function": "issue_refund"' in shown
    assert "actions  approve/reject" in shown
    assert '"edits": false' in shown
    assert "decision none yet" in shown
    # AND once answered, who decided, how and with what
    world.answer(thread, question, "approve")
    assert main(["questions", "show", question, "--json"]) == 0
    printed = capsys.readouterr().out
    view = json.loads(printed[printed.index("{\n") :])  # the handlers' log lines may come first
    assert (view["outcome"]["answer"]["action"], view["outcome"]["expired"]) == ("approve", False)


def test_questions_show_prints_the_last_answer_the_router_refused_on_the_queue_and_why(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an open question, and a program of the user's own that writes answers to the entry queue directly
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN it sends an action the question does not take (nothing answers a queue's sender)
    (refused,) = world.answer(thread, question, "escalate", by="bob@example.com")
    assert refused.reason == "action_not_allowed", refused
    capsys.readouterr()
    # THEN `questions show` says the question is still open and why that answer was refused, and by whom
    assert main(["questions", "show", question]) == 0
    shown = capsys.readouterr().out
    assert "decision none yet" in shown
    refused_line = next(line for line in shown.splitlines() if line.startswith("refused  "))
    assert "action_not_allowed" in refused_line, refused_line
    assert "from bob@example.com" in refused_line, refused_line
    assert "['approve', 'reject']" in refused_line, f"the detail says what it may be: {refused_line}"
    # AND the JSON view carries it for scripts
    assert main(["questions", "show", question, "--json"]) == 0
    printed = capsys.readouterr().out
    view = json.loads(printed[printed.index("{\n") :])
    assert (view["last_refusal"]["reason"], view["last_refusal"]["via"]) == ("action_not_allowed", "queue")


def test_answer_sends_any_json_answer(world: Any, target: Target, capsys: pytest.CaptureFixture[str]) -> None:
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN a whole JSON answer is sent as it is, it decides
    assert main(["answer", question, "--answer", '{"action": "reject", "reason": "duplicate order"}']) == 0
    world.pump()
    assert world.row(thread, question)["answer"] == {"action": "reject", "reason": "duplicate order"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["answer", "q-1"], "say how to answer: an ACTION such as approve, or --answer JSON"),
        (["answer", "q-1", "approve", "--answer", "{}"], "--answer is the whole answer: leave out ACTION"),
        (["answer", "q-1", "approve", "--args", "[1]"], "--args must be a JSON object of the arguments to change"),
        (["answer", "q-1", "approve", "--args", "{amount"], "--args is not JSON: Expecting property name"),
        (["questions", "show"], "questions takes no words but `show QUESTION`"),
        (["questions", "show", "no-such-question"], "no question 'no-such-question'"),
        (["start", "t-1", "--input", "{}", "--start-id", " "], "--start-id must not be empty"),
    ],
)
def test_bad_answer_show_and_start_options_are_one_line(
    target: Target, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, f"expected one line, got {err!r}"


@pytest.fixture
def with_dead_letters(world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Target:
    """The CLI pointed at the local stack as `agent-wait dev` points it, dead-letter queue included."""
    monkeypatch.chdir(tmp_path)
    local = world.local
    found = Target(
        queue_url=local.queue_url,
        table=local.table,
        endpoint_url=local.endpoint_url,
        region="us-east-1",
        dead_letter_url=local.environment["AGENT_WAIT_DLQ_URL"],
    )
    found.save()
    return found


def test_dead_letters_are_listed_with_their_reasons_and_only_the_chosen_ones_redriven(
    world: Any, with_dead_letters: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_wait.contract.messages import group_id_for

    sqs = world.local.client("sqs")
    thread = f"order-dlq-{uuid.uuid4().hex[:6]}"
    # GIVEN a body the router can never read (it dead-letters it), and a start SQS gave up on while a store
    # was failing (the router dead-lettered it on its last receive, as retries_exhausted)
    sqs.send_message(
        QueueUrl=world.local.queue_url, MessageBody="not json", MessageGroupId="g-1", MessageDeduplicationId=thread
    )
    world.pump()
    start = {"thread_id": thread, "input": {"order_id": thread, "amount": 900}, "start_id": thread}
    attributes = {
        "agent_wait_reason": {"DataType": "String", "StringValue": "retries_exhausted"},
        "agent_wait_detail": {"DataType": "String", "StringValue": "ProvisionedThroughputExceeded on every receive"},
        "agent_wait_thread_id": {"DataType": "String", "StringValue": thread},
    }
    sqs.send_message(
        QueueUrl=with_dead_letters.dead_letter_url,
        MessageBody=json.dumps(start),
        MessageGroupId=group_id_for(thread),
        MessageDeduplicationId=f"{thread}-start",
        MessageAttributes=attributes,
    )
    capsys.readouterr()
    # WHEN they are listed, twice
    for _ in range(2):
        assert main(["dead-letters", "list", "--json"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"message_id"')]
        reasons = {row["reason"] for row in rows}
        # THEN each shows its reason, and listing leaves them on the queue
        assert {"not_json", "retries_exhausted"} <= reasons
        assert any(row["thread_id"] == thread and row["reason"] == "retries_exhausted" for row in rows)
    # WHEN only the retries_exhausted ones are redriven
    assert main(["dead-letters", "redrive", "--reason", "retries_exhausted", "--thread", thread]) == 0
    assert "1 redriven to the entry queue" in capsys.readouterr().out
    # THEN the start runs, and the unreadable body stays where it is
    world.pump()
    assert _open_question(world, thread)
    assert main(["dead-letters", "list", "--json"]) == 0
    left = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"message_id"')]
    assert not [row for row in left if row["thread_id"] == thread]
    assert "not_json" in {row["reason"] for row in left}


def test_agent_failed_dead_letters_are_never_redriven(
    with_dead_letters: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dead-letters", "redrive", "--reason", "agent_failed"]) == 1
    err = capsys.readouterr().err
    assert "agent_failed dead letters are never redriven: fix the agent, then run `agent-wait retry THREAD`" in err
    assert err.count("\n") == 1


def test_stack_finds_a_deployed_stack_by_its_outputs_whatever_the_construct_id(
    world: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no state file and no AGENT_WAIT_* settings: only the stack's name and where AWS is
    monkeypatch.chdir(tmp_path)
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE"):
        monkeypatch.delenv(name, raising=False)
    thread = f"order-stack-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    where = ["--stack", world.local.stack_name, "--region", "us-east-1", "--endpoint-url", world.local.endpoint_url]
    capsys.readouterr()
    # WHEN the questions are listed as JSON lines
    assert main(["questions", "--status", "open", "--output", "json", *where]) == 0
    # THEN they come from that stack's table
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"thread_id"')]
    assert question in {row["question_id"] for row in rows}


def test_outputs_are_found_whatever_the_construct_id() -> None:
    from agent_wait.cli._target import _outputs_target

    found = _outputs_target(
        {
            "ApprovalsEntryQueueUrl1A2B3C4D": "https://sqs.eu-west-1.amazonaws.com/1/entry.fifo",
            "ApprovalsDeadLetterQueueUrlAABBCCDD": "https://sqs.eu-west-1.amazonaws.com/1/dlq.fifo",
            "ApprovalsQuestionTableName0F0F0F0F": "questions",
            "ApprovalsAnswerApiAnswerApiUrl12345678": "https://abc.execute-api.eu-west-1.amazonaws.com/",
        },
        "stack Approvals",
    )
    assert found is not None
    assert (found.queue_url, found.table, found.region) == (
        "https://sqs.eu-west-1.amazonaws.com/1/entry.fifo",
        "questions",
        "eu-west-1",
    )
    assert found.dead_letter_url == "https://sqs.eu-west-1.amazonaws.com/1/dlq.fifo"
    assert found.api_url == "https://abc.execute-api.eu-west-1.amazonaws.com"


def test_a_state_file_left_by_a_dev_that_ended_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.chdir(tmp_path)
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    Target(queue_url="q", table="t", endpoint_url=f"http://127.0.0.1:{port}", region="us-east-1").save()
    assert main(["questions"]) == 1
    err = capsys.readouterr().err
    assert "`agent-wait dev` is not running any more (.agent-wait/local.json is left from a run that ended" in err
    assert err.count("\n") == 1


def test_an_unknown_profile_is_one_line_that_says_how_to_list_them(
    target: Target, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    assert main(["questions", "--profile", "no-such-profile-here"]) == 1
    err = capsys.readouterr().err
    assert "no AWS profile 'no-such-profile-here'; list yours with: aws configure list-profiles" in err
    assert err.count("\n") == 1


def test_output_takes_table_or_json_only(target: Target, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["questions", "--output", "yaml"])
    assert exited.value.code == 2
    assert "invalid choice: 'yaml'" in capsys.readouterr().err


def test_a_cli_error_is_a_wait_error() -> None:
    from agent_wait.cli._target import CliError
    from agent_wait.errors import WaitError

    error = CliError("say how to answer")
    assert isinstance(error, WaitError)
    assert error.message == "say how to answer"


def test_the_cli_finds_a_running_dev_from_any_folder_of_the_project(
    world: Any, target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN agent-wait dev running from the project folder (its state file there), and a start sent
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE"):
        monkeypatch.delenv(name, raising=False)
    thread = f"order-sub-{uuid.uuid4().hex[:6]}"
    assert main(["start", thread, "--input", json.dumps({"order_id": thread, "amount": 900})]) == 0
    world.pump()
    # WHEN the CLI runs from a folder two levels down
    nested = tmp_path / "my_agent" / "tools"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    capsys.readouterr()
    # THEN it talks to that dev, as from the project folder
    assert main(["questions", "--status", "open"]) == 0
    assert f"thread={thread}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["approve", "--args", '{"amount": "lots"}'], "(edit_not_allowed): this question's policy does not allow"),
        (["approve", "--args", '{"amount": 500}'], "(edit_not_allowed)"),
        (["--answer", '{"action": "maybe"}'], "(action_not_allowed): answer must be an object whose action is one of"),
        (["--answer", '{"action": "approve", "note": "a\\u0000b"}'], "answer.note holds a control character"),
    ],
    ids=["the-readmes-lots", "an-edit-the-policy-refuses", "an-action-it-does-not-take", "a-control-character"],
)
def test_an_answer_the_question_would_refuse_is_not_sent_and_says_why(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str], argv: list[str], reason: str
) -> None:
    # GIVEN a refund waiting for finance, whose policy allows no edited arguments
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN an answer is sent on the queue (no token) that the router would refuse
    code = main(["answer", question, *argv])
    # THEN the CLI exits non-zero, says why in one line, and sends nothing: the question stays open
    err = capsys.readouterr().err
    assert code == 1
    assert "not sent" in err
    assert reason in err
    assert world.pump() == []
    assert world.row(thread, question)["status"] == "open"


def _on_dev(world: Any, monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """The CLI in a terminal beside `agent-wait dev` serving `world`'s stack from `folder`: dev's own state file
    (with its local issuer), and none of the stack's settings in the environment (the emulator sets them here)."""
    monkeypatch.chdir(folder)
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE"):
        monkeypatch.delenv(name, raising=False)
    Target.of_local_stack(world.local).save()


def test_a_queue_answer_on_dev_is_credited_to_the_dev_user_not_the_emulators_iam_id(
    world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_wait.cli._dev import DEV_USER

    # GIVEN the CLI pointed at a running `agent-wait dev` (as dev saves itself: with its local issuer)
    _on_dev(world, monkeypatch, tmp_path)
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN a question is answered on the entry queue without --by
    assert main(["answer", question, "approve", "--queue"]) == 0
    printed = capsys.readouterr().out
    world.pump()
    # THEN the CLI says who it is credited to, and the ledger records that person, not the emulator's IAM id
    assert f"credited to {DEV_USER}" in printed
    row = world.row(thread, question)
    assert (row["status"], row["answered_by"], row["via"]) == ("resumed", DEV_USER, "queue")


def test_a_queue_answer_names_who_it_is_credited_to_with_by(
    world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the CLI pointed at a running `agent-wait dev`
    _on_dev(world, monkeypatch, tmp_path)
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN a question is answered on the entry queue --by someone
    assert main(["answer", question, "reject", "--queue", "--by", "ops@example.com"]) == 0
    printed = capsys.readouterr().out
    world.pump()
    # THEN that person is who it is credited to
    assert "credited to ops@example.com" in printed
    assert world.row(thread, question)["answered_by"] == "ops@example.com"


def test_the_token_hints_name_no_group_of_the_refund_demo_for_a_question_open_to_anyone(
    world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a question whose policy names no answerer group, on agent-wait dev
    _on_dev(world, monkeypatch, tmp_path)
    monkeypatch.delenv("AGENT_WAIT_TOKEN", raising=False)
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN it is answered with a token the API refuses, and cancelled with no token at all
    assert main(["answer", question, "approve", "--token", "not-a-token"]) == 1
    refused = capsys.readouterr().err
    assert main(["cancel", question, "--reason", "testing"]) == 1
    untold = capsys.readouterr().err
    # THEN each says how to sign in, in no group: anyone may answer it
    for err in (refused, untold):
        assert "agent-wait token --user you@example.com" in err
        assert "--groups" not in err


def test_a_token_hint_signs_in_to_the_groups_the_questions_policy_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from agent_wait.cli import _api, _commands

    # GIVEN a question whose policy names who may answer it, and who may extend its deadline
    rules = {
        "answerers": {"groups": ["release-managers", "sre"], "principals": []},
        "extend": {"groups": ["sre-leads"], "people": [], "max_total": "P7D"},
    }
    record = SimpleNamespace(envelope=SimpleNamespace(rules=rules))
    monkeypatch.setattr(_commands, "ledger_record", lambda target, question_id: record)
    target = Target(queue_url="q", table="t")
    # WHEN a hint is made for it; THEN it signs in to those groups
    assert _api.token_hint(target, "q-1") == "agent-wait token --user you@example.com --groups release-managers,sre"
    assert _api.token_hint(target, "q-1", rule="extend") == "agent-wait token --user you@example.com --groups sre-leads"


def test_a_token_hint_names_no_group_when_the_question_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_wait.cli import _api, _commands
    from agent_wait.cli._target import CliError

    def missing(target: Any, question_id: str) -> Any:
        raise CliError(f"no question {question_id!r}")

    monkeypatch.setattr(_commands, "ledger_record", missing)
    assert _api.token_hint(Target(queue_url="q", table="t"), "q-1") == "agent-wait token --user you@example.com"


def test_questions_shows_what_each_question_asks_clipped_to_a_line(
    world: Any, target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an open refund question, asked by a `@wait` call
    thread = f"order-cli-{uuid.uuid4().hex[:6]}"
    world.start(thread, 900)
    question = _open_question(world, thread)
    # WHEN the questions are listed, as a table and as JSON lines
    assert main(["questions", "--status", "open"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if question in line]
    assert main(["questions", "--status", "open", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"thread_id"')]
    # THEN each says what is asked: the call with its arguments
    assert line.endswith(f'  asks=issue_refund(order_id="{thread}", amount=900)')
    [row] = [row for row in rows if row["question_id"] == question]
    assert row["asks"] == f'issue_refund(order_id="{thread}", amount=900)'


def test_a_long_question_is_clipped_in_the_listing_and_whole_in_json() -> None:
    from agent_wait.cli._commands import ASKS_WIDTH, clipped

    # GIVEN what a question asks, longer than a listing's line allows; WHEN it is clipped
    text = "Approve the migration of " + "every table " * 20
    short = clipped(text)
    # THEN it fits, says it was cut, and a short one is left as it is
    assert len(short) == ASKS_WIDTH
    assert short.endswith("…")
    assert clipped('restart(service="billing")') == 'restart(service="billing")'
    assert clipped("two\nlines") == "two lines"


def test_several_running_devs_and_none_here_is_one_line_naming_their_folders(
    world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    # GIVEN two running devs registered for this user (one emulator plays both), and one that ended long ago
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE"):
        monkeypatch.delenv(name, raising=False)
    running = Target.of_local_stack(world.local)
    for folder in ("shop", "support"):
        replace(running, folder=str(tmp_path / folder)).register()
    ended = replace(running, folder=str(tmp_path / "old"), endpoint_url="http://127.0.0.1:9")
    ended.register()
    # WHEN the CLI runs in a folder none of them serves
    monkeypatch.chdir(tmp_path)
    assert main(["questions"]) == 1
    err = capsys.readouterr().err
    # THEN it names the folders of the running ones, says how to choose, and forgets the one that ended
    assert f"several `agent-wait dev` are running, serving {tmp_path / 'shop'} and {tmp_path / 'support'}" in err
    assert str(tmp_path / "old") not in err
    assert err.count("\n") == 1
    assert not ended.registered_at().exists()


def test_the_dev_of_this_folder_wins_over_a_dev_registered_elsewhere(
    world: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    from agent_wait.cli._target import resolve_target

    # GIVEN a dev running here (its .agent-wait/local.json) and another registered for another folder
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _on_dev(world, monkeypatch, tmp_path)
    replace(Target.of_local_stack(world.local), folder=str(tmp_path / "other"), table="other-table").register()
    # WHEN the CLI finds its stack; THEN it is this folder's, as it always was
    assert resolve_target().table == world.local.table
