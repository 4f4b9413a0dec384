"""Configuration: missing or wrong settings fail at cold start, naming every variable; the same Router
runs without Lambda; importing the host without its extra names the extra to install."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.aws_stack import FakeLambdaContext, HostStack, answer_message, reset_handlers, sqs_event, sqs_record
from tests.support.aws_stack import start_message as start

from agent_wait import InMemoryAnnounce
from agent_wait.contract.schema import QuestionStatus, Settings
from agent_wait.engine import InMemoryDeadLetter, OutcomeKind, Router
from agent_wait.errors import ConfigurationError, MissingExtraError
from agent_wait.host import HostSettings
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

# A handler that fails at cold start has emitted no metric; Powertools warns when it flushes none.
pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")

ROUTER_NEEDS = [Settings.GRAPH, Settings.TABLE, Settings.CHECKPOINT_TABLE, Settings.DLQ_URL]


def test_missing_router_settings_are_all_named_in_one_error() -> None:
    # GIVEN an environment with none of the router's variables
    # WHEN the settings are read
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("router", environ={})

    # THEN one error names every missing variable and how to fix it
    assert raised.value.variables == tuple(name.value for name in ROUTER_NEEDS)
    for name in ROUTER_NEEDS:
        assert f"{name.value} is not set; the AgentWait construct sets it, or export it" in raised.value.message


def test_missing_sweep_settings_are_all_named_in_one_error() -> None:
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("sweep", environ={Settings.SWEEP_LIMIT.value: "0"})
    assert raised.value.variables == (Settings.TABLE.value, Settings.QUEUE_URL.value, Settings.SWEEP_LIMIT.value)
    assert "AGENT_WAIT_SWEEP_LIMIT must be a whole number of at least 1; got '0'" in raised.value.message


def test_malformed_settings_are_named_with_the_value_given() -> None:
    environ = {
        Settings.GRAPH.value: "nomodule",
        Settings.TABLE.value: "questions",
        Settings.CHECKPOINT_TABLE.value: "checkpoints",
        Settings.DLQ_URL.value: "sqs://not-a-url",
        Settings.TOPIC_ARN.value: "my-topic",
        Settings.SWEEP_LIMIT.value: "ten",
    }
    with pytest.raises(ConfigurationError) as raised:
        HostSettings.from_env("router", environ=environ)
    assert raised.value.variables == (
        Settings.GRAPH.value,
        Settings.DLQ_URL.value,
        Settings.TOPIC_ARN.value,
        Settings.SWEEP_LIMIT.value,
    )
    message = raised.value.message
    assert "AGENT_WAIT_GRAPH must look like 'package.module:attribute'; got 'nomodule'" in message
    assert "AGENT_WAIT_DLQ_URL must be a URL starting with http(s)://; got 'sqs://not-a-url'" in message
    assert "AGENT_WAIT_TOPIC_ARN must be an SNS topic ARN; got 'my-topic'" in message


def test_the_router_handler_fails_at_cold_start_naming_the_missing_variable(
    host: HostStack, lambda_context: FakeLambdaContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a deployed router whose table variable is missing
    monkeypatch.delenv(Settings.TABLE.value)
    reset_handlers()

    # WHEN the first event arrives
    from agent_wait.host import router

    event = sqs_event(sqs_record(start("order-1", "o-1"), group_id="order-1"))
    with pytest.raises(ConfigurationError, match=re.escape("AGENT_WAIT_TABLE is not set")) as raised:
        router.handler(event, lambda_context)

    # THEN the error names it
    assert raised.value.variables == (Settings.TABLE.value,)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("nomodule", re.escape("AGENT_WAIT_GRAPH must look like 'package.module:attribute'; got 'nomodule'")),
        (
            "no_such_module_anywhere:graph",
            re.escape("AGENT_WAIT_GRAPH='no_such_module_anywhere:graph': cannot import module"),
        ),
        (
            "tests.agents.graphs:nope",
            re.escape(
                "AGENT_WAIT_GRAPH='tests.agents.graphs:nope': module 'tests.agents.graphs' has no attribute 'nope'"
            ),
        ),
        (
            "tests.agents.graphs:NOT_A_GRAPH",
            re.escape("AGENT_WAIT_GRAPH must name a compiled LangGraph graph or a factory that takes a checkpointer")
            + ".*; got dict$",
        ),
    ],
    ids=["not-module-colon-attribute", "module-not-importable", "attribute-missing", "not-a-graph"],
)
def test_a_bad_graph_setting_fails_at_cold_start_naming_the_variable(
    host: HostStack, lambda_context: FakeLambdaContext, monkeypatch: pytest.MonkeyPatch, spec: str, expected: str
) -> None:
    # GIVEN AGENT_WAIT_GRAPH naming something that is not a graph
    monkeypatch.setenv(Settings.GRAPH.value, spec)
    reset_handlers()

    # WHEN the router's first event arrives
    from agent_wait.host import router

    with pytest.raises(ConfigurationError, match=expected) as raised:
        router.handler(sqs_event(sqs_record(start("order-1", "o-1"), group_id="order-1")), lambda_context)

    # THEN the error names the variable
    assert raised.value.variables == (Settings.GRAPH.value,)


def test_a_graph_compiled_without_a_checkpointer_runs_on_the_checkpoint_table(
    host: HostStack, lambda_context: FakeLambdaContext, monkeypatch: pytest.MonkeyPatch, unique: str
) -> None:
    # GIVEN AGENT_WAIT_GRAPH naming a compiled graph rather than a factory
    monkeypatch.setenv(Settings.GRAPH.value, "tests.agents.graphs:compiled_graph")
    reset_handlers()
    from agent_wait.host import router

    # WHEN a start and an approve arrive
    thread_id = f"order-{unique}"
    router.handler(sqs_event(sqs_record(start(thread_id, f"o-{unique}"), group_id=thread_id)), lambda_context)
    (record,) = host.ledger().questions(thread_id)
    answer = sqs_record(answer_message(thread_id, record.question_id), group_id=thread_id)
    assert router.handler(sqs_event(answer), lambda_context) == {"batchItemFailures": []}

    # THEN the run parked and resumed from the DynamoDB checkpoint table
    assert graphs.refunds_paid(f"o-{unique}") == 1
    assert host.dynamodb.scan(TableName=host.checkpoint_table, Limit=1)["Items"]


def test_the_router_works_without_lambda_one_message_at_a_time(unique: str) -> None:
    # GIVEN a Router on in-memory backends around the refund graph (a queue worker, a web server, a test)
    announce = InMemoryAnnounce()
    ledger = InMemoryLedger()
    router = Router(
        LangGraphAdapter(graphs.build_graph(InMemorySaver())),
        ledger,
        dead_letter=InMemoryDeadLetter(),
        announce=announce,
    )
    thread_id, order_id = f"order-{unique}", f"o-{unique}"

    # WHEN it is handed a start, then an approve
    started = router.handle(json.dumps(start(thread_id, order_id)))
    (question_id,) = started.asked
    applied = router.handle(json.dumps(answer_message(thread_id, question_id)))

    # THEN the question was asked, announced, answered and resumed, and the refund ran once
    assert started.kind is OutcomeKind.STARTED
    assert applied.kind is OutcomeKind.APPLIED
    assert [t.value for t, _ in announce.events] == ["created", "answered", "resumed"]
    assert ledger.get(thread_id, question_id).status is QuestionStatus.RESUMED  # type: ignore[union-attr]
    assert graphs.refunds_paid(order_id) == 1


def test_importing_the_handlers_makes_no_network_call_and_reads_no_setting() -> None:
    # GIVEN a fresh interpreter with no agent-wait settings and an unreachable AWS endpoint
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_WAIT_")}
    env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"

    # WHEN both handler modules are imported
    code = "import agent_wait.host.router, agent_wait.host.sweep; print('imported')"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )

    # THEN the import succeeds: settings are checked on the first event, not at import
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported"


@pytest.mark.parametrize("package", ["aws_lambda_powertools", "boto3"])
def test_importing_the_host_without_its_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    # GIVEN the host extra's package is not installed
    monkeypatch.setitem(sys.modules, package, None)  # type: ignore[arg-type]
    for name in [m for m in sys.modules if m == "agent_wait.host" or m.startswith("agent_wait.host.")]:
        monkeypatch.delitem(sys.modules, name)

    # WHEN the host is imported
    # THEN the error names the package and the extra to install
    expected = (
        f"agent_wait.host needs {package}, which is not installed; install it with: pip install 'agent-wait[host]'"
    )
    with pytest.raises(MissingExtraError, match=re.escape(expected)) as raised:
        import agent_wait.host  # noqa: F401

    assert raised.value.extra == "host"


def test_an_unknown_role_is_a_configuration_error_naming_the_roles() -> None:
    from agent_wait.errors import ConfigurationError
    from agent_wait.host.settings import HostRole

    with pytest.raises(ConfigurationError, match=r"role must be one of \['router', 'sweep', 'api'\]; got 'worker'"):
        HostSettings.from_env("worker", {})
    assert (
        HostSettings.from_env(
            HostRole.SWEEP, {"AGENT_WAIT_TABLE": "t", "AGENT_WAIT_QUEUE_URL": "https://sqs.example/q.fifo"}
        ).table
        == "t"
    )
