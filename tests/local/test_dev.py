"""`agent-wait dev`: the local stack in the foreground, printing envelopes, stopping cleanly."""

from __future__ import annotations

import io
import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_wait.cli import main
from agent_wait.cli._target import LOCAL_STATE


def test_dev_prints_each_envelope_and_cleans_up(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agent-wait dev` (run_dev) serves the stack, prints envelopes without their question, and stops cleanly."""
    import io

    import agent_wait.cli._dev as dev

    monkeypatch.chdir(tmp_path)
    out, stop = io.StringIO(), threading.Event()
    status: list[int] = []
    server = threading.Thread(target=lambda: status.append(dev.run_dev(lambda: refund_template, out=out, stop=stop)))
    server.start()
    try:
        deadline = time.monotonic() + 120
        while not LOCAL_STATE.exists() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        state = json.loads(LOCAL_STATE.read_text())
        thread = f"order-dev-{uuid.uuid4().hex[:6]}"
        assert (
            main(
                [
                    "start",
                    thread,
                    "--input",
                    json.dumps({"order_id": thread, "amount": 987654, "customer": "zoe@example.com"}),
                ]
            )
            == 0
        )
        while "wait.created" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        stop.set()
        server.join(timeout=60)
    printed = out.getvalue()
    assert f"thread={thread}" in printed
    assert "tags=approver_group=finance" in printed
    # Canary values no id or timestamp can contain by chance (a question id may hold "900").
    after = printed.split("wait.created", 1)[1]
    assert "987654" not in after, "the question's content must not be printed"
    assert "zoe@example.com" not in after, "the question's content must not be printed"
    assert status == [0], "dev must stop cleanly"
    assert not LOCAL_STATE.exists(), "dev must remove its state file"
    assert state["queue_url"].endswith(".fifo")


def _run_dev(template: dict, *, verbose: bool, until: str, act: Any = None) -> tuple[str, str]:
    """Run `agent-wait dev` (sweeping every 0.2 s) until `until` is printed; returns what it printed and what reached
    the handlers' own JSON log handler."""
    import io
    import logging

    import agent_wait.cli._dev as dev
    from agent_wait.host import router

    # The handlers' JSON log handler (one per service name, shared by the three handlers), read into `records`.
    [json_handler] = [h for h in logging.getLogger(router.logger.name).handlers if hasattr(h, "setStream")]
    records = io.StringIO()
    previous = json_handler.setStream(records)
    out, stop = io.StringIO(), threading.Event()
    status: list[int] = []
    server = threading.Thread(
        target=lambda: status.append(
            dev.run_dev(lambda: template, out=out, stop=stop, sweep_every=0.2, verbose=verbose)
        )
    )
    server.start()
    try:
        deadline = time.monotonic() + 60
        while "Ctrl-C" not in out.getvalue() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if act is not None:
            act()
        while until not in out.getvalue() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        server.join(timeout=60)
        json_handler.setStream(previous)
    assert status == [0], "dev must stop cleanly"
    return out.getvalue(), records.getvalue()


def test_dev_prints_readable_lines_and_no_json_records_by_default(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_wait.host import router

    monkeypatch.chdir(tmp_path)

    # GIVEN agent-wait dev without --verbose, sweeping often; WHEN a handler warns, and messages and sweeps run
    def warn() -> None:
        router.logger.warning("a handler's warning", extra={"thread_id": "order-9", "reason": "testing"})
        main(["start", "order-log-1", "--input", json.dumps({"order_id": "o-1", "amount": 5, "customer": "c"})])

    printed, records = _run_dev(refund_template, verbose=False, until="a handler's warning", act=warn)
    # THEN the warning is one readable line, and no JSON record reaches the terminal: no `message handled`,
    # no `sweep done`, and no warning about trusted senders (the emulator sets them itself)
    assert "agent-wait dev: warning: a handler's warning  thread_id=order-9 reason=testing" in printed
    assert records == "", f"JSON records reached the terminal: {records[:300]}"
    assert '{"level"' not in printed
    assert "AGENT_WAIT_TRUSTED_SENDERS" not in printed + records


def test_dev_verbose_prints_the_handlers_json_records(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    printed, _ = _run_dev(refund_template, verbose=True, until='"message":"sweep done"')
    assert '"message":"sweep done"' in printed


def test_dev_stops_quietly_when_nobody_reads_its_output(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C on `agent-wait dev | tee log` ends `tee` first: dev's next line finds the pipe closed."""
    import agent_wait.cli._dev as dev

    monkeypatch.chdir(tmp_path)

    # GIVEN agent-wait dev printing to a pipe whose reader is gone once dev said where everything is
    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            if "Ctrl-C" in self.getvalue():
                raise BrokenPipeError(32, "Broken pipe")
            return super().write(text)

    out, status, stop = ClosedPipe(), [], threading.Event()
    server = threading.Thread(target=lambda: status.append(dev.run_dev(lambda: refund_template, out=out, stop=stop)))
    server.start()
    try:
        deadline = time.monotonic() + 60
        while "Ctrl-C" not in out.getvalue() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        # WHEN dev has a line to print (a question's envelope) but nobody reads it any more
        start = {"order_id": "o-2", "amount": 987654, "customer": "c@example.com"}
        main(["start", f"order-pipe-{uuid.uuid4().hex[:6]}", "--input", json.dumps(start)])
        server.join(timeout=30)
        stopped_by_itself = not server.is_alive()
    finally:
        stop.set()
        server.join(timeout=60)
    # THEN it stops as Ctrl-C would, cleanly, with its state file gone
    assert stopped_by_itself, "dev must stop when its output is gone"
    assert status == [0]
    assert not LOCAL_STATE.exists(), "dev must remove its state file"


def test_the_cli_silences_jsiis_node_banner_before_jsii_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_wait.cli._dev as dev

    seen: list[str | None] = []
    monkeypatch.delenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION")
    monkeypatch.setattr(
        dev, "run_dev", lambda *a, **k: seen.append(os.environ.get("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"))
    )
    monkeypatch.setattr("agent_wait.local.stack.require_emulator", lambda: None)
    monkeypatch.setattr("agent_wait.cli._app", lambda name, attribute: lambda: {})
    main(["dev"])
    assert seen == ["20"]


def test_a_stack_whose_agent_cannot_load_fails_to_start_before_it_serves(refund_template: dict[str, Any]) -> None:
    import re
    import urllib.error
    import urllib.request

    from agent_wait.errors import ConfigurationError
    from agent_wait.local.stack import EmulatedStack

    # GIVEN a stack whose AGENT_WAIT_GRAPH names a callable that is no graph factory
    local = EmulatedStack(
        refund_template,
        stack_name=f"bad-graph-{uuid.uuid4().hex[:8]}",
        extra_environment={"AGENT_WAIT_GRAPH": "json:dumps"},
    )
    # WHEN it starts, THEN it fails at once, naming the setting, the error and the fix, and leaves nothing running
    try:
        with pytest.raises(
            ConfigurationError,
            match=re.escape(
                "AGENT_WAIT_GRAPH names a callable that raised TypeError when called with the checkpointer"
            ),
        ) as raised:
            local.start()
    finally:
        local.stop()
    assert "a factory that takes a checkpointer and returns one" in str(raised.value)
    assert raised.value.variables == ("AGENT_WAIT_GRAPH",)
    assert EmulatedStack._running is None
    if local.api_url:
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(f"{local.api_url}/questions", timeout=5)


def test_dev_names_every_preview_and_says_when_a_start_finishes_without_asking(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    thread = f"order-small-{uuid.uuid4().hex[:6]}"

    # GIVEN agent-wait dev; WHEN a refund under the auto-approve limit starts (the agent finishes, asking nothing)
    def start_small() -> None:
        main(["start", thread, "--input", json.dumps({"order_id": thread, "amount": 20, "customer": "c"})])

    printed, _ = _run_dev(refund_template, verbose=False, until=f"finished        thread={thread}", act=start_small)
    # THEN the banner names the email preview beside Slack's and Teams', and the finished start is one line
    banner = printed.split("Ctrl-C", 1)[0]
    assert "/dev/email" in banner
    assert "/mcp  (ask_person, answered as a task" in banner, "the refund example serves the MCP server"
    assert "/mcp/iam  (SigV4 with the emulator's keys: local / local)" in banner
    assert f"finished        thread={thread}  (the agent ran to the end without asking)" in printed


def test_dev_prints_an_answer_the_router_refused_on_the_queue_as_one_line_with_its_reason(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_wait.cli._commands import _send, list_questions
    from agent_wait.cli._target import local_target

    monkeypatch.chdir(tmp_path)
    thread = f"order-refused-{uuid.uuid4().hex[:6]}"

    # GIVEN agent-wait dev with a question open; WHEN a program writes an answer the question does not take straight
    # to the entry queue (the CLI would refuse to send it)
    def ask_then_answer_wrongly() -> None:
        main(["start", thread, "--input", json.dumps({"order_id": thread, "amount": 900, "customer": "c"})])
        target, question = local_target(), None
        deadline = time.monotonic() + 30
        while question is None and time.monotonic() < deadline:
            rows = [row for row in list_questions(target, "open") if row["thread_id"] == thread]
            question = rows[0]["question_id"] if rows else None
            time.sleep(0.1)
        assert question is not None, "the agent asked nothing"
        _send(target, {"thread_id": thread, "question_id": question, "answer": {"action": "escalate"}})

    printed, _ = _run_dev(refund_template, verbose=False, until="refused ", act=ask_then_answer_wrongly)
    # THEN dev prints the refusal as one line: which question, the reason and what the question takes
    refused = [line for line in printed.splitlines() if line.startswith("refused ")]
    assert len(refused) == 1, printed
    assert f"thread={thread}" in refused[0]
    assert "reason=action_not_allowed" in refused[0]
    assert "['approve', 'reject']" in refused[0]


def test_an_envelope_without_a_deadline_is_printed_as_the_cli_prints_it() -> None:
    from agent_wait.cli._dev import describe

    # GIVEN a question with no deadline (its envelope's expires_at is null); WHEN dev prints it
    line = describe({"type": "wait.created", "thread_id": "t-1", "question_id": "q-1", "expires_at": None})
    # THEN it says `never`, as `agent-wait questions` does, never Python's None
    assert "expires=never" in line
    assert "None" not in line


BAD_PROPS_APP = """
from aws_cdk import App, Stack

from agent_wait_cdk import AgentWait


def template():
    app = App(context={"aws:cdk:bundling-stacks": []})
    AgentWait(Stack(app, "BadProps"), "AgentWait", graph="not-a-graph-spec")
    return app.synth().get_stack_by_name("BadProps").template
"""


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_an_app_whose_props_are_invalid_is_its_problem_in_a_line_and_the_traceback_only_when_verbose(
    verbose: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an --app module whose AgentWait has an invalid prop
    monkeypatch.chdir(tmp_path)
    module = f"bad_props_app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(BAD_PROPS_APP)
    # WHEN agent-wait dev runs it
    assert main(["dev", "--app", module, *(["--verbose"] if verbose else [])]) == 1
    err = capsys.readouterr().err
    # THEN it says what is wrong, as the construct says it, before anything starts
    [problem] = [line for line in err.splitlines() if line.startswith("agent-wait: ")]
    assert problem.startswith("agent-wait: the stack's template cannot be synthesized (AgentWaitPropsError")
    assert "graph must be 'module:attribute', e.g. 'my_app.graph:build_graph'; got 'not-a-graph-spec'" in err
    assert not LOCAL_STATE.exists()
    # AND the traceback only when asked for
    assert ("Traceback (most recent call last):" in err) is verbose
    assert ("--verbose shows the traceback" in problem) is not verbose


def test_the_cli_finds_the_running_dev_from_an_unrelated_folder_and_says_which_folder_it_serves(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # this user's registry of running devs
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(project)
    asked: list[tuple[int, str, str]] = []

    # GIVEN agent-wait dev running in the project folder; WHEN the CLI runs in a folder outside it
    def from_elsewhere() -> None:
        capsys.readouterr()
        monkeypatch.chdir(elsewhere)
        # The emulator sets the stack's settings in this process for its handlers; another terminal has none.
        settings = {name: os.environ.pop(name) for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE")}
        try:
            status = main(["questions"])
            captured = capsys.readouterr()
            asked.append((status, captured.out, captured.err))
        finally:
            os.environ.update(settings)
            monkeypatch.chdir(project)

    _run_dev(refund_template, verbose=False, until="Ctrl-C", act=from_elsewhere)
    # THEN it reaches that dev, and says which folder the dev serves
    [(status, out, err)] = asked
    assert status == 0, err
    assert "no stack" not in out + err
    assert f"agent-wait: using the `agent-wait dev` serving {project.resolve()}" in err
    # AND once dev stopped, it is gone from the registry: the CLI says there is no stack
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert main(["questions"]) == 1
    assert "no stack to talk to" in capsys.readouterr().err
