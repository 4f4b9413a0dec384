"""What the constructs synthesize matches `agent_wait.contract.schema`, the shapes the runtime and its tests use.

The constructs may not import the runtime, so they restate the names; these tests are what keeps the two
copies equal. Tests may import `agent_wait.contract.schema`: it is standard library only.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from tests.cdk.conftest import REPO, Synth

from agent_wait.contract import schema
from agent_wait_cdk import _shapes
from agent_wait_cdk.bundling import REQUIREMENTS_FILE


def key_schema(partition: str, sort: str) -> list[dict[str, str]]:
    return [{"AttributeName": partition, "KeyType": "HASH"}, {"AttributeName": sort, "KeyType": "RANGE"}]


@pytest.mark.parametrize("shape_name", ["QUESTION_TABLE", "CHECKPOINT_TABLE"])
def test_tables_match_the_schema(refund: Synth, shape_name: str) -> None:
    shape: schema.TableShape = getattr(schema, shape_name)
    _, table = refund.one("AWS::DynamoDB::Table", KeySchema=key_schema(shape.partition_key, shape.sort_key))
    props = table["Properties"]
    assert props["TimeToLiveSpecification"] == {"AttributeName": shape.ttl_attribute, "Enabled": True}
    indexes = [
        (
            index["IndexName"],
            index["KeySchema"][0]["AttributeName"],
            index["KeySchema"][1]["AttributeName"],
            index["Projection"],
        )
        for index in props.get("GlobalSecondaryIndexes", [])
    ]
    # Names, keys and projections (KEYS_ONLY, INCLUDE and its attributes, or ALL) are the schema's.
    assert indexes == [(i.name, i.partition_key, i.sort_key, i.projection) for i in shape.indexes]
    assert {a["AttributeType"] for a in props["AttributeDefinitions"]} == {"S"}  # every key is a string


def test_the_channel_record_names_match_the_schema() -> None:
    """The constructs' record table (`ChannelRecordTable`) is keyed and expires as the runtime's record reads it."""
    assert schema.CHANNEL_RECORD.partition_key == _shapes.CHANNEL_RECORD_PARTITION_KEY
    assert schema.CHANNEL_RECORD.ttl_attribute == _shapes.CHANNEL_RECORD_TTL_ATTRIBUTE


def test_the_synthesized_channel_record_matches_the_schema(slack: Synth) -> None:
    # GIVEN the Slack stack (its messages table is a ChannelRecordTable) / THEN its keys and TTL are the schema's
    shape = schema.CHANNEL_RECORD
    _, table = slack.one("AWS::DynamoDB::Table", KeySchema=[{"AttributeName": shape.partition_key, "KeyType": "HASH"}])
    props = table["Properties"]
    assert props["AttributeDefinitions"] == [{"AttributeName": shape.partition_key, "AttributeType": "S"}]
    assert props["TimeToLiveSpecification"] == {"AttributeName": shape.ttl_attribute, "Enabled": True}


def test_entry_queue_matches_the_schema(refund: Synth) -> None:
    queues = refund.resources("AWS::SQS::Queue")
    (entry,) = [q["Properties"] for q in queues.values() if "RedrivePolicy" in q["Properties"]]
    shape = schema.ENTRY_QUEUE
    assert entry["FifoQueue"] is shape.fifo
    assert entry["ContentBasedDeduplication"] is shape.content_based_deduplication
    assert entry["RedrivePolicy"]["maxReceiveCount"] == shape.max_receive_count
    assert entry["DeduplicationScope"] == shape.deduplication_scope
    assert entry["FifoThroughputLimit"] == shape.fifo_throughput_limit


def test_every_setting_name_matches() -> None:
    restated = {value for name, value in vars(_shapes).items() if name.startswith("ENV_")}
    assert restated == {setting.value for setting in schema.Settings}


def test_the_functions_set_only_schema_settings_and_powertools_variables(variant: Synth) -> None:
    allowed = {s.value for s in schema.Settings} | {
        "POWERTOOLS_SERVICE_NAME",
        "POWERTOOLS_METRICS_NAMESPACE",
        "POWERTOOLS_TRACE_DISABLED",
        "LOG_LEVEL",
    }
    if type(variant.stack).__name__ == "RefundAgentStack":
        allowed.add("REFUND_TABLE")  # the example's own table, added by its stack, not by AgentWait
    for fn in variant.resources("AWS::Lambda::Function").values():
        assert set(fn["Properties"]["Environment"]["Variables"]) <= allowed


def test_metric_names_and_powertools_defaults_are_the_runtime_ones() -> None:
    """The alarms watch the names the runtime emits, in the namespace and service its factories default to."""
    from agent_wait.engine.metrics import METRIC_NAMES
    from agent_wait.host import _powertools

    assert METRIC_NAMES["router_errors"] == _shapes.ROUTER_ERRORS_METRIC
    assert METRIC_NAMES["sweep_errors"] == _shapes.SWEEP_ERRORS_METRIC
    assert METRIC_NAMES["oldest_open_age"] == _shapes.OLDEST_OPEN_QUESTION_METRIC
    assert _shapes.SERVICE_NAME == _powertools.DEFAULT_SERVICE_NAME
    assert _shapes.METRICS_NAMESPACE == _powertools.DEFAULT_METRICS_NAMESPACE


@pytest.mark.parametrize("handler", [_shapes.ROUTER_HANDLER, _shapes.SWEEP_HANDLER, _shapes.API_HANDLER])
def test_handlers_name_functions_the_runtime_defines(handler: str) -> None:
    module, _, attribute = handler.rpartition(".")
    path = REPO / "runtime" / Path(*module.split(".")).with_suffix(".py")
    if not path.is_file():  # a package: `agent_wait.host.api` is `agent_wait/host/api/__init__.py`
        path = path.with_suffix("") / "__init__.py"
    tree = ast.parse(path.read_text())
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert attribute in defined, f"{path} defines no {attribute}()"


def test_lambda_requirements_are_the_locked_host_dependencies() -> None:
    """A dependency change in uv.lock must reach the bundle (and so its asset hash). Regenerate with
    `uv export --frozen --no-dev --extra langgraph-host --extra mcp --extra a2a --extra push --extra passkey --no-hashes
    --no-emit-project` into constructs/agent_wait_cdk/requirements-lambda.txt (the four features' libraries, which a
    function's bundle keeps only when the stack turns that feature on: `bundling/slim.py`)."""
    exported = subprocess.run(
        [
            *("uv", "export", "--frozen", "--no-dev", "--extra", "langgraph-host"),
            *("--extra", "mcp", "--extra", "a2a", "--extra", "push", "--extra", "passkey"),
            *("--no-hashes", "--no-emit-project"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pins = [line for line in exported.splitlines() if line and not line.startswith((" ", "#"))]
    committed = [
        line for line in REQUIREMENTS_FILE.read_text().splitlines() if line and not line.startswith((" ", "#"))
    ]
    assert committed == pins
