"""`agent-wait dev` keeps its state: a stack started with a state folder, stopped and started again, carries on.

Each test asks the refund agent a question on one `EmulatedStack`, stops it, and starts a second one on the same
folder, as Ctrl-C and the same `agent-wait dev` would: the question is still listed, what was handed out before the
restart (an inbox tab's token, a printed signed link) still answers it, and the agent resumes once.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from _http import call
from examples.refund_agent.demo import MovableClock, count_refunds

from agent_wait.local.stack import EmulatedStack

LARGE = 900
"""Over the refund's auto-approve limit: finance is asked."""


def _ask(local: EmulatedStack) -> tuple[str, str]:
    """Start a refund over the limit; (thread, question id)."""
    thread = f"order-state-{uuid.uuid4().hex[:8]}"
    local.send(
        {"thread_id": thread, "input": {"order_id": thread, "amount": LARGE}, "start_id": uuid.uuid4().hex},
        deduplication_id=uuid.uuid4().hex,
    )
    [question] = [q for outcome in local.pump().outcomes for q in outcome.asked]
    return thread, question


def _listed(local: EmulatedStack, token: str) -> list[str]:
    reply = call(f"{local.api_url}/questions", token=token)
    assert reply.status == 200, reply
    return [q["question_id"] for q in reply.body["questions"]]


def test_a_question_asked_before_a_restart_is_listed_and_answered_with_the_old_token_and_the_agent_resumes_once(
    refund_template: dict[str, Any], tmp_path: Path
) -> None:
    # GIVEN a stack on a state folder that asked finance a question, and an inbox tab's token from before
    clock = MovableClock()
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as first:
        thread, question = _ask(first)
        token = first.issuer.token("finance@example.com", ["finance"])
        url = first.api_url
    # WHEN the stack stops and starts again on the same folder
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as second:
        # THEN the API is where it was, the question is listed, and the old token answers it
        assert second.api_url == url
        assert question in _listed(second, token)
        answer = {"answer": {"action": "approve"}}
        reply = call(f"{second.api_url}/questions/{question}/answer", method="POST", token=token, body=answer)
        assert reply.status in (200, 202), reply
        second.pump()
        # AND the agent resumed from its checkpoint exactly once
        assert count_refunds(second, thread) == 1
        second.pump()
        assert count_refunds(second, thread) == 1


def test_a_signed_link_printed_before_a_restart_answers_after_it(
    refund_template: dict[str, Any], tmp_path: Path
) -> None:
    from agent_wait.cli._links import question_link
    from agent_wait.cli._target import Target

    # GIVEN a stack on a state folder that asked a question, and its signed link as `dev` prints it
    clock = MovableClock()
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as first:
        thread, question = _ask(first)
        link = question_link(Target.of_local_stack(first), question, "approve", approver="finance@example.com")
    # WHEN the stack stops and starts again on the same folder, and the link is used
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as second:
        page, token = link.split("#", 1)
        reply = call(f"{page.removesuffix('/confirm')}/link/answer", method="POST", body={"token": token})
        # THEN it decides the question, and the agent resumes once
        assert reply.status == 200, reply
        second.pump()
        assert count_refunds(second, thread) == 1


def test_a_fresh_start_forgets_the_saved_state(refund_template: dict[str, Any], tmp_path: Path) -> None:
    from agent_wait.local.state import forget_state

    # GIVEN a stack on a state folder that asked a question, stopped
    clock = MovableClock()
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as first:
        _, question = _ask(first)
    # WHEN the saved state is forgotten (`agent-wait dev --fresh`) and the stack starts again
    forget_state(tmp_path)
    with EmulatedStack(refund_template, clock=clock, state_dir=tmp_path) as second:
        # THEN it starts empty
        token = second.issuer.token("finance@example.com", ["finance"])
        assert question not in _listed(second, token)
        assert _listed(second, token) == []


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not a state file"),
        (json.dumps({"format": 999, "stack_name": "x"}), "format 999"),
    ],
    ids=["corrupt", "another-version"],
)
def test_a_state_file_that_cannot_be_read_is_refused_naming_the_file_and_fresh(
    refund_template: dict[str, Any], tmp_path: Path, content: str, why: str
) -> None:
    from agent_wait.local.state import STATE_FILE, StateFileError

    # GIVEN a state folder whose state file is corrupt or of another format
    (tmp_path / STATE_FILE).write_text(content)
    # WHEN a stack starts on it
    with pytest.raises(StateFileError) as raised:
        EmulatedStack(refund_template, state_dir=tmp_path).start()
    # THEN the error names the file, what is wrong, and `--fresh`
    message = str(raised.value)
    assert str(tmp_path / STATE_FILE) in message
    assert why in message
    assert "--fresh" in message
    assert EmulatedStack._running is None


def test_when_the_folders_port_is_taken_the_api_moves_and_says_old_tabs_will_not_reach_it(
    refund_template: dict[str, Any], tmp_path: Path
) -> None:
    import socket

    # GIVEN a stack that ran on a state folder, and its port since taken by another program
    with EmulatedStack(refund_template, state_dir=tmp_path) as first:
        port = int(first.api_url.rsplit(":", 1)[1])
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        # WHEN the stack starts again on the folder
        with EmulatedStack(refund_template, state_dir=tmp_path) as second:
            # THEN it serves on another port, and its note says so and what it means
            assert not second.api_url.endswith(f":{port}")
            assert f"port {port}" in second.state.port_note
            assert "will not reach it" in second.state.port_note
            assert second.state.port_note in second.state.describe()


def test_a_state_that_cannot_be_saved_fails_the_stop_after_stopping_and_leaves_no_file(
    refund_template: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from agent_wait.local.state import STATE_FILE, StateFileError

    def refuse(*_: Any) -> None:
        raise OSError("disk full")

    # GIVEN a stack on a state folder whose state cannot be exported
    monkeypatch.setattr("agent_wait.local.snapshot.export_snapshot", refuse)
    local = EmulatedStack(refund_template, state_dir=tmp_path)
    local.start()
    # WHEN it stops
    with pytest.raises(StateFileError) as raised:
        local.stop()
    # THEN the error names the file, everything stopped anyway, and no state file (whole or half) was left
    assert str(tmp_path / STATE_FILE) in str(raised.value)
    assert EmulatedStack._running is None
    assert "AWS_ENDPOINT_URL" not in os.environ or os.environ["AWS_ENDPOINT_URL"] != local.endpoint_url
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(STATE_FILE) or p.name.startswith(".state")]


# -- `agent-wait dev` ---------------------------------------------------------------------------------


def test_dev_keeps_its_state_beside_local_json_and_passes_fresh_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_wait.cli._dev as dev
    from agent_wait.cli import main
    from agent_wait.cli._target import LOCAL_STATE

    # GIVEN `run_dev` replaced by a recorder
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(dev, "run_dev", lambda *a, **k: seen.append(k) or 0)
    monkeypatch.setattr("agent_wait.local.stack.require_emulator", lambda: None)
    monkeypatch.setattr("agent_wait.cli._app", lambda name, attribute: lambda: {})
    # WHEN `agent-wait dev` runs with and without `--fresh`
    main(["dev"])
    main(["dev", "--fresh"])
    # THEN both keep the state in the folder local.json is in, and only the second starts empty
    assert [k["state_dir"] for k in seen] == [LOCAL_STATE.parent, LOCAL_STATE.parent]
    assert [k["fresh"] for k in seen] == [False, True]


def test_dev_fresh_deletes_the_saved_state_before_it_starts(tmp_path: Path) -> None:
    import io

    from agent_wait.cli._dev import run_dev
    from agent_wait.cli._target import CliError
    from agent_wait.local.state import IDENTITY_FILE, STATE_FILE

    # GIVEN a state folder with a saved state and the folder's identity
    (tmp_path / STATE_FILE).write_text("{}")
    (tmp_path / IDENTITY_FILE).write_text("{}")
    seen: list[bool] = []

    class StopError(Exception):
        """Stops `run_dev` at the synth: what matters is what the folder held when the stack was to start."""

    def template() -> dict[str, Any]:
        seen.append((tmp_path / STATE_FILE).exists())
        raise StopError

    # WHEN `dev --fresh` starts on it (the synth's failure is dev's one-line error)
    with pytest.raises(CliError, match="StopError"):
        run_dev(template, out=io.StringIO(), state_dir=tmp_path, fresh=True)
    # THEN the saved state is gone and the folder's identity (its port, its signing key) is kept
    assert seen == [False]
    assert (tmp_path / IDENTITY_FILE).exists()


def test_dev_refuses_a_state_file_it_cannot_read_with_one_line_naming_it_and_fresh(
    refund_template: dict[str, Any], tmp_path: Path
) -> None:
    import io

    from agent_wait.cli._dev import run_dev
    from agent_wait.cli._target import CliError
    from agent_wait.local.state import STATE_FILE

    # GIVEN a state folder whose state file is not JSON
    (tmp_path / STATE_FILE).write_text("\x00garbage")
    # WHEN `dev` starts on it
    with pytest.raises(CliError) as raised:
        run_dev(lambda: refund_template, out=io.StringIO(), state_dir=tmp_path)
    # THEN it stops with one line naming the file and `--fresh`, and leaves the file as it was
    assert str(tmp_path / STATE_FILE) in str(raised.value)
    assert "--fresh" in str(raised.value)
    assert (tmp_path / STATE_FILE).read_text() == "\x00garbage"


def test_dev_says_where_its_state_lives_and_saves_it_as_it_stops(
    refund_template: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import threading
    import time

    from agent_wait.cli._dev import run_dev
    from agent_wait.local.state import STATE_FILE

    # GIVEN `dev` running on a state folder
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "state"
    out, stop, status = io.StringIO(), threading.Event(), []
    server = threading.Thread(
        target=lambda: status.append(run_dev(lambda: refund_template, out=out, stop=stop, state_dir=folder))
    )
    server.start()
    try:
        deadline = time.monotonic() + 120
        while "Ctrl-C" not in out.getvalue() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        # WHEN it is stopped
        stop.set()
        server.join(timeout=60)
    # THEN its banner said where the state lives and that `--fresh` starts empty, and the state was saved there
    assert status == [0]
    [line] = [line for line in out.getvalue().splitlines() if line.lstrip().startswith("state ")]
    assert str(folder) in line
    assert "--fresh" in line
    assert json.loads((folder / STATE_FILE).read_text())["format"] == 1
    # AND the folder, which holds the dev sign-in's key, keeps itself out of git
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_precise_deadlines_schedule_is_put_back_as_it_was() -> None:
    import boto3
    from moto import mock_aws

    from agent_wait.local.snapshot import ImportReport, _export_schedules, _import_schedules, _jsonable, _native

    schedule = {
        "Name": "q-1-deadline",
        "GroupName": "agent-wait-deadlines",
        "ScheduleExpression": "at(2030-01-02T03:04:05)",
        "FlexibleTimeWindow": {"Mode": "OFF"},
        "Target": {
            "Arn": "arn:aws:lambda:us-east-1:123456789012:function:sweep",
            "RoleArn": "arn:aws:iam::1:role/r",
            "Input": json.dumps({"question_id": "q-1"}),
        },
        "ActionAfterCompletion": "DELETE",
    }
    client = lambda service: boto3.client(service, region_name="us-east-1")  # noqa: E731
    # GIVEN an emulator holding a one-time schedule, saved as the state file saves it (through JSON)
    with mock_aws():
        client("scheduler").create_schedule_group(Name="agent-wait-deadlines")
        client("scheduler").create_schedule(**schedule)
        saved = json.loads(json.dumps(_jsonable(_export_schedules(client))))
    # WHEN it is put back into an empty emulator
    with mock_aws():
        report = ImportReport()
        _import_schedules(_native(saved), client, report)
        found = client("scheduler").get_schedule(Name="q-1-deadline", GroupName="agent-wait-deadlines")
    # THEN the schedule is there with its time, target and input
    assert report.written == {"schedules": 1}
    assert found["ScheduleExpression"] == schedule["ScheduleExpression"]
    assert found["Target"]["Arn"] == schedule["Target"]["Arn"]
    assert json.loads(found["Target"]["Input"]) == {"question_id": "q-1"}
