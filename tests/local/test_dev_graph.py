"""`agent-wait dev --graph my_pkg.graph:build`: a user's own graph on the default AgentWait stack, no glue module."""

from __future__ import annotations

import contextlib
import io
import json
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_wait.cli import main
from agent_wait.cli._target import LOCAL_STATE

GRAPH = """
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from agent_wait import WaitPolicy
from agent_wait.langgraph import wait


class State(TypedDict, total=False):
    service: str
    result: str


@wait(WaitPolicy(timeout="PT1H", allowed_actions=("approve", "reject"), tags={"team": "ops"}))
def restart(service: str) -> str:
    return f"restarted {service}"


def build_graph(checkpointer):
    builder = StateGraph(State)
    builder.add_node("restart", lambda state: {"result": restart(state["service"])})
    builder.add_edge(START, "restart")
    builder.add_edge("restart", END)
    return builder.compile(checkpointer=checkpointer)
"""


@dataclass
class Dev:
    """`agent-wait dev --graph` running in a thread: what it printed, how it ended, and the test's deadline."""

    out: io.StringIO
    status: list[int]
    deadline: float

    def wait_for(self, text: str) -> None:
        while text not in self.out.getvalue() and time.monotonic() < self.deadline:
            time.sleep(0.2)


@contextlib.contextmanager
def dev_with_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, source: str) -> Iterator[Dev]:
    """A project folder holding only `package/graph.py` (`source`), and `agent-wait dev --graph` serving it."""
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "graph.py").write_text(textwrap.dedent(source))
    monkeypatch.chdir(tmp_path)
    for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE", "AGENT_WAIT_GRAPH"):
        monkeypatch.delenv(name, raising=False)
    spec = f"{package}.graph:build_graph"
    running = Dev(io.StringIO(), [], time.monotonic() + 120)
    stop = threading.Event()

    def serve() -> None:
        import agent_wait.cli._dev as dev
        from agent_wait.cli._graph_stack import check_graph, graph_template

        check_graph(spec)
        running.status.append(dev.run_dev(lambda: graph_template(spec), out=running.out, stop=stop))

    server = threading.Thread(target=serve)
    server.start()
    try:
        running.wait_for("Ctrl-C")
        yield running
    finally:
        stop.set()
        server.join(timeout=60)


def test_dev_runs_a_users_own_graph_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a project folder with nothing but the user's graph, served by agent-wait dev
    with dev_with_graph(tmp_path, monkeypatch, "ops_agent", GRAPH) as dev:
        # WHEN a run is started and its question answered from "another terminal"
        assert main(["start", "svc-1", "--input", json.dumps({"service": "billing"})]) == 0
        question = _wait_for_question(capsys, dev.deadline)
        assert main(["answer", question, "approve"]) == 0
        # THEN the question is decided and the agent resumed
        while time.monotonic() < dev.deadline:
            capsys.readouterr()
            assert main(["questions", "--status", "resumed"]) == 0
            if question in capsys.readouterr().out:
                break
            time.sleep(0.5)
        else:
            pytest.fail("the answered question never reached resumed")
        dev.wait_for("team=ops")  # dev prints each envelope on its next turn
        assert "team=ops" in dev.out.getvalue()
    assert dev.status == [0]
    assert not LOCAL_STATE.exists()


RESTART_OR_SKIP = GRAPH.replace('allowed_actions=("approve", "reject")', 'allowed_actions=("restart", "skip")')
"""The graph, asking whether to restart or skip: nothing like the refund example's approve or reject."""


def test_dev_prints_the_graphs_own_hints_and_links_that_answer_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from _http import call

    # GIVEN a user's graph served by agent-wait dev (the default stack: no answer API, no link keys of its own)
    with dev_with_graph(tmp_path, monkeypatch, "link_agent", RESTART_OR_SKIP) as dev:
        banner = dev.out.getvalue()
        assert main(["start", "svc-link", "--input", json.dumps({"service": "billing"})]) == 0
        question = _wait_for_question(capsys, dev.deadline)
        dev.wait_for("  answer   ")
        # THEN dev's hints are this graph's: its input keys, and the question's own actions, never the refund's
        assert "agent-wait start THREAD --input JSON   (this graph's input keys: optional service, result)" in banner
        assert "approve" not in banner
        assert "finance" not in banner
        assert f"  answer   agent-wait answer {question} restart   (its actions: restart, skip)" in dev.out.getvalue()
        # WHEN a link is asked for, for the question dev announced with its links
        capsys.readouterr()
        assert main(["link", question, "restart"]) == 0
        url = capsys.readouterr().out.strip().splitlines()[-1]
        dev.wait_for(f"/questions/{question}/confirm#")
        printed = dev.out.getvalue()
        # AND it is opened as the confirmation page opens it: GET the page, then POST the fragment's token
        page, token = url.split("#", 1)
        opened = call(page)
        answered = call(page.removesuffix("/confirm") + "/link/answer", method="POST", body={"token": token})
        # THEN the page is served, the link's answer won, and the agent resumes with it
        assert (opened.status, opened.headers["content-type"].split(";")[0]) == (200, "text/html")
        assert (answered.status, answered.body["result"], answered.body["outcome"]["via"]) == (200, "won", "link")
        while time.monotonic() < dev.deadline:
            capsys.readouterr()
            assert main(["questions", "--status", "resumed"]) == 0
            if question in capsys.readouterr().out:
                break
            time.sleep(0.5)
        else:
            pytest.fail("the question answered by link never reached resumed")
        # AND a link for a question no longer open is one line that says so
        assert main(["link", question, "restart"]) == 1
        assert f"question {question} is resumed: a link answers an open question only" in capsys.readouterr().err
    assert f"  link restart  {url.split('#', 1)[0]}#v1.local." in printed
    assert f"  link skip     {url.split('#', 1)[0]}#v1.local." in printed


def test_the_answer_hint_signs_in_to_a_group_the_question_names() -> None:
    from agent_wait.cli._dev import answer_hint

    restricted = {
        "question_id": "q-1",
        "allowed_actions": ["deploy", "hold"],
        "rules": {"answerers": {"groups": ["release-managers"], "principals": []}, "edits": True},
    }
    assert answer_hint(restricted) == (
        "export AGENT_WAIT_TOKEN=$(agent-wait token --user you@example.com --groups release-managers); "
        "agent-wait answer q-1 deploy   (its actions: deploy, hold)"
    )
    assert answer_hint({"question_id": "q-2", "allowed_actions": ["ack"], "rules": {}}) == "agent-wait answer q-2 ack"


def _wait_for_question(capsys: pytest.CaptureFixture[str], deadline: float) -> str:
    while time.monotonic() < deadline:
        capsys.readouterr()
        assert main(["questions", "--status", "open", "--output", "json"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"thread_id"')]
        if rows:
            return rows[0]["question_id"]
        time.sleep(0.5)
    pytest.fail("no question was asked")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ops_agent.graph", "--graph must look like package.module:attribute"),
        ("no_such_module:build", "cannot import no_such_module"),
        ("json:no_such_factory", "json has no no_such_factory; --graph names a compiled graph or a factory"),
        (
            "json:dumps",
            "--graph json:dumps cannot run: --graph names a callable that raised TypeError when called with the "
            "checkpointer",
        ),
        ("json:__doc__", "--graph json:__doc__ cannot run: --graph must name a compiled LangGraph graph"),
    ],
)
def test_a_graph_that_cannot_be_found_is_one_line_before_anything_starts(
    spec: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import agent_wait.cli._dev as dev

    def started(*args: object, **kwargs: object) -> int:
        pytest.fail(f"--graph {spec} was accepted: agent-wait dev started")

    monkeypatch.setattr(dev, "run_dev", started)
    monkeypatch.chdir(tmp_path)
    assert main(["dev", "--graph", spec]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert not LOCAL_STATE.exists()


FAILING = """
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    service: str


def explode(state: State) -> dict:
    raise ValueError(f"cannot restart {state['service']}")


def build_graph(checkpointer):
    builder = StateGraph(State)
    builder.add_node("explode", explode)
    builder.add_edge(START, "explode")
    builder.add_edge("explode", END)
    return builder.compile(checkpointer=checkpointer)
"""


def test_dev_shows_the_agents_traceback_on_this_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a graph whose node raises, run with agent-wait dev
    with dev_with_graph(tmp_path, monkeypatch, "broken_agent", FAILING) as dev:
        # WHEN a start makes it raise
        assert main(["start", "svc-9", "--input", json.dumps({"service": "billing"})]) == 0
        dev.wait_for("Traceback")
    # THEN the terminal shows the whole traceback, with the exception's text, and the command to retry
    printed = dev.out.getvalue()
    assert "agent-wait dev: the agent raised on thread svc-9; after fixing it run: agent-wait retry svc-9" in printed
    assert "Traceback (most recent call last):" in printed
    assert "ValueError: cannot restart billing" in printed


def test_dev_keeps_serving_when_the_agent_or_a_turn_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_wait.local.stack import EmulatedStack

    # GIVEN a graph whose node raises, run with agent-wait dev, and one turn of dev's loop that fails outright
    pump, broken = EmulatedStack.pump, threading.Event()

    def pump_once_broken(self: EmulatedStack, **kwargs: object) -> object:
        if broken.is_set():
            broken.clear()
            raise ConnectionError("the emulator hung up")
        return pump(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(EmulatedStack, "pump", pump_once_broken)
    with dev_with_graph(tmp_path, monkeypatch, "flaky_agent", FAILING) as dev:
        # WHEN a start makes the agent raise, then a turn fails, then another start comes
        assert main(["start", "svc-1", "--input", json.dumps({"service": "billing"})]) == 0
        dev.wait_for("thread svc-1")
        broken.set()
        dev.wait_for("a turn failed")
        assert main(["start", "svc-2", "--input", json.dumps({"service": "search"})]) == 0
        dev.wait_for("thread svc-2")
        # THEN dev is still serving: the first thread is marked failed, the second was run too
        capsys.readouterr()
        assert main(["failures", "--output", "json"]) == 0
        failed = {json.loads(line)["thread_id"] for line in capsys.readouterr().out.splitlines()}
        assert dev.status == [], "dev must still be running"
    printed = dev.out.getvalue()
    assert "agent-wait dev: a turn failed (ConnectionError: the emulator hung up); still serving" in printed
    assert "ValueError: cannot restart search" in printed
    assert failed == {"svc-1", "svc-2"}
    assert dev.status == [0]


def test_the_dev_sign_in_form_offers_no_group_of_the_refund_demo() -> None:
    """A user's own project has its own groups: the dev sign-in starts with none, rather than the demo's `finance`."""
    import html.parser
    from importlib.resources import files

    # GIVEN the inbox page `agent-wait dev` serves, with its dev sign-in form
    page = (files("agent_wait.host.api") / "pages" / "inbox.html").read_text(encoding="utf-8")
    fields: dict[str, dict[str, str | None]] = {}

    class Inputs(html.parser.HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found = dict(attrs)
            if tag == "input" and found.get("id"):
                fields[str(found["id"])] = found

    Inputs().feed(page)
    # THEN its groups field starts empty, and nothing on the form names the demo's group
    assert fields["dev-groups"].get("value") in (None, "")
    form = page.split('<form id="sign-in-dev"', 1)[1].split("</form>", 1)[0]
    assert "finance" not in form


PYDANTIC_AI_AGENT = """
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from agent_wait import WaitPolicy
from agent_wait.pydantic_ai import wait


def model(messages, info):
    if any(isinstance(part, ToolReturnPart) for message in messages for part in message.parts):
        return ModelResponse(parts=[TextPart("done")])
    return ModelResponse(parts=[ToolCallPart("restart", {"service": "billing"}, tool_call_id="call-1")])


build_graph = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests])


@build_graph.tool
@wait(WaitPolicy(timeout="PT1H", allowed_actions=("approve", "reject"), tags={"team": "ops"}))
def restart(ctx: RunContext[Any], service: str) -> str:
    return f"restarted {service}"
"""
"""A Pydantic AI agent, the attribute `--graph` names: docs/frameworks.md says `dev --graph` runs one."""


def test_dev_graph_runs_a_pydantic_ai_agent_as_it_runs_a_langgraph_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pydantic_ai")
    # GIVEN a project folder with nothing but a Pydantic AI agent, served by agent-wait dev --graph
    with dev_with_graph(tmp_path, monkeypatch, "pai_agent", PYDANTIC_AI_AGENT) as dev:
        # WHEN a run is started and its question answered
        assert main(["start", "svc-1", "--input", json.dumps("restart billing")]) == 0
        question = _wait_for_question(capsys, dev.deadline)
        assert main(["answer", question, "approve"]) == 0
        # THEN the agent resumed
        while time.monotonic() < dev.deadline:
            capsys.readouterr()
            assert main(["questions", "--status", "resumed"]) == 0
            if question in capsys.readouterr().out:
                break
            time.sleep(0.5)
        else:
            pytest.fail("the answered question never reached resumed")
    assert dev.status == [0]
