"""The router and sweep functions: runtime, handlers, sizes, environment, event source, schedule, logs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from tests.cdk.conftest import EMBEDDED_GRAPH, Synth, inline_code, new_app

from agent_wait_cdk import AgentWait, AgentWaitPropsError

REFUND_GRAPH = "examples.refund_agent.graph:build_graph"


def function(synth: Synth, handler: str) -> tuple[str, dict[str, Any]]:
    return synth.one("AWS::Lambda::Function", Handler=handler)


def router(synth: Synth) -> tuple[str, dict[str, Any]]:
    return function(synth, "agent_wait.host.router.handler")


def sweep(synth: Synth) -> tuple[str, dict[str, Any]]:
    return function(synth, "agent_wait.host.sweep.handler")


def ref_of(synth: Synth, type_: str, name_part: str) -> dict[str, str]:
    (logical_id,) = [k for k in synth.resources(type_) if name_part in k]
    return {"Ref": logical_id}


def test_functions_run_python_3_13_x86_64_by_default(refund: Synth) -> None:
    for _, fn in (router(refund), sweep(refund)):
        assert fn["Properties"]["Runtime"] == "python3.13"
        assert fn["Properties"]["Architectures"] == ["x86_64"]


def test_arm64_on_request(features: Synth) -> None:
    for _, fn in (router(features), sweep(features)):
        assert fn["Properties"]["Architectures"] == ["arm64"]


def test_default_sizes_and_timeouts(refund: Synth) -> None:
    _, r = router(refund)
    _, s = sweep(refund)
    assert (r["Properties"]["MemorySize"], r["Properties"]["Timeout"]) == (1024, 60)
    assert (s["Properties"]["MemorySize"], s["Properties"]["Timeout"]) == (512, 60)
    assert "ReservedConcurrentExecutions" not in r["Properties"]


def test_sizes_timeouts_and_reserved_concurrency_props(features: Synth) -> None:
    _, r = router(features)
    _, s = sweep(features)
    assert (r["Properties"]["MemorySize"], r["Properties"]["Timeout"]) == (2048, 120)
    assert r["Properties"]["ReservedConcurrentExecutions"] == 5
    assert (s["Properties"]["MemorySize"], s["Properties"]["Timeout"]) == (256, 90)


def test_environment_with_topic_and_bus(refund: Synth) -> None:
    common = {
        "AGENT_WAIT_GRAPH": REFUND_GRAPH,
        "AGENT_WAIT_TABLE": ref_of(refund, "AWS::DynamoDB::Table", "QuestionTable"),
        "AGENT_WAIT_CHECKPOINT_TABLE": ref_of(refund, "AWS::DynamoDB::Table", "CheckpointTable"),
        "AGENT_WAIT_QUEUE_URL": {"Ref": "AgentWaitEntryQueue74B3737D"},
        "AGENT_WAIT_DLQ_URL": {"Ref": "AgentWaitEntryQueueDeadLetterQueueB64EFE3E"},
        "AGENT_WAIT_TOPIC_ARN": ref_of(refund, "AWS::SNS::Topic", "Topic"),
        "AGENT_WAIT_BUS_NAME": ref_of(refund, "AWS::Events::EventBus", "Bus"),
        "POWERTOOLS_SERVICE_NAME": "agent-wait",
        "POWERTOOLS_METRICS_NAMESPACE": "AgentWait",
        "LOG_LEVEL": "INFO",
    }
    _, router_fn = router(refund)
    _, sweep_fn = sweep(refund)
    # The example stack adds its own refunds table for its graph; AgentWait sets the rest.
    refunds = {"REFUND_TABLE": ref_of(refund, "AWS::DynamoDB::Table", "Refunds")}
    assert router_fn["Properties"]["Environment"]["Variables"] == {**common, **refunds}
    assert sweep_fn["Properties"]["Environment"]["Variables"] == common


def test_environment_with_webhook_no_bus_and_a_sweep_limit(features: Synth) -> None:
    _, r = router(features)
    _, s = sweep(features)
    env = r["Properties"]["Environment"]["Variables"]
    assert env["AGENT_WAIT_WEBHOOK_URL"] == "https://hooks.example.com/agent-wait"
    assert env["LOG_LEVEL"] == "DEBUG"
    assert "AGENT_WAIT_BUS_NAME" not in env
    assert "AGENT_WAIT_TOPIC_ARN" in env
    assert "AGENT_WAIT_SWEEP_LIMIT" not in env
    assert s["Properties"]["Environment"]["Variables"] == {**env, "AGENT_WAIT_SWEEP_LIMIT": "50"}


def test_environment_without_announcers(quiet: Synth) -> None:
    _, r = router(quiet)
    env = r["Properties"]["Environment"]["Variables"]
    for name in ("AGENT_WAIT_TOPIC_ARN", "AGENT_WAIT_BUS_NAME", "AGENT_WAIT_WEBHOOK_URL"):
        assert name not in env
    assert env["AGENT_WAIT_QUEUE_URL"]["Ref"].startswith("OwnQueue")
    assert env["AGENT_WAIT_DLQ_URL"]["Ref"].startswith("OwnDlq")


def test_embedded_graph_is_the_one_configured(embedded: Synth) -> None:
    _, r = router(embedded)
    assert r["Properties"]["Environment"]["Variables"]["AGENT_WAIT_GRAPH"] == EMBEDDED_GRAPH


def test_router_consumes_the_entry_queue_reporting_batch_item_failures(refund: Synth, features: Synth) -> None:
    for synth, batch in ((refund, 10), (features, 5)):
        router_id, _ = router(synth)
        synth.template.has_resource_properties(
            "AWS::Lambda::EventSourceMapping",
            {
                "FunctionName": {"Ref": router_id},
                "EventSourceArn": {"Fn::GetAtt": ["AgentWaitEntryQueue74B3737D", "Arn"]},
                "BatchSize": batch,
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
            },
        )
    refund.template.resource_count_is("AWS::Lambda::EventSourceMapping", 1)


def test_sweep_runs_on_a_schedule(refund: Synth, features: Synth) -> None:
    for synth, expression in ((refund, "rate(1 minute)"), (features, "rate(5 minutes)")):
        sweep_id, _ = sweep(synth)
        synth.template.has_resource_properties(
            "AWS::Events::Rule",
            {
                "ScheduleExpression": expression,
                "State": "ENABLED",
                "Targets": [
                    {
                        "Arn": {"Fn::GetAtt": [sweep_id, "Arn"]},
                        "Id": "Target0",
                        "RetryPolicy": {"MaximumRetryAttempts": 0},
                    }
                ],
            },
        )
        synth.template.has_resource_properties(
            "AWS::Lambda::Permission",
            {"Action": "lambda:InvokeFunction", "FunctionName": {"Fn::GetAtt": [sweep_id, "Arn"]},
             "Principal": "events.amazonaws.com"},
        )  # fmt: skip


def test_each_function_logs_to_its_own_log_group_with_retention(refund: Synth, features: Synth) -> None:
    for synth, days in ((refund, 30), (features, 7)):
        groups = synth.resources("AWS::Logs::LogGroup")
        assert len(groups) == 2
        for group_id, group in groups.items():
            assert group["Properties"]["RetentionInDays"] == days
            assert any(
                fn["Properties"]["LoggingConfig"] == {"LogGroup": {"Ref": group_id}}
                for fn in synth.resources("AWS::Lambda::Function").values()
            )


def test_function_props_are_checked_together_under_agent_wait_names() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(
            stack,
            "AgentWait",
            graph="not a graph",
            code=inline_code(),
            router_timeout=Duration.minutes(16),
            router_memory_size=64,
            router_batch_size=11,
            sweep_rate=Duration.seconds(90),
            sweep_limit=0,
            log_level="LOUD",
            oldest_open_question_threshold=Duration.seconds(10),
        )
    assert info.value.problems == (
        "graph must be 'module:attribute', e.g. 'my_app.graph:build_graph'; got 'not a graph'",
        "log_level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL; got 'LOUD'",
        "router_timeout must be between 1 and 900 seconds; got 960 seconds",
        "router_memory_size must be between 128 and 10240 MB; got 64 MB",
        "router_batch_size must be between 1 and 10 records; got 11 records",
        "sweep_rate must be a whole number of minutes; got 90 seconds",
        "sweep_limit must be between 1 and 10000 questions; got 0 questions",
        "oldest_open_question_threshold must be between 60 and 31536000 seconds; got 10 seconds",
    )
    assert str(info.value).startswith("S/AgentWait: 8 invalid prop(s):\n  - graph must be")


def test_unresolved_tokens_are_not_range_checked() -> None:
    from aws_cdk import CfnParameter

    stack = Stack(new_app(), "S")
    memory = CfnParameter(stack, "Memory", type="Number", default=64).value_as_number
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), router_memory_size=memory)  # type: ignore[arg-type]


def test_rate_message_names_the_unit() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError, match=re.escape("sweep_rate must be between 1 and 1440 minutes; got 2880")):
        AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), sweep_rate=Duration.days(2))
