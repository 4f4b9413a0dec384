"""The router and sweep functions: runtime, handlers, sizes, environment, event source, schedule, logs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from aws_cdk.assertions import Template
from tests.cdk.conftest import EMBEDDED_GRAPH, Synth, inline_code, new_app

from agent_wait_cdk import AgentWait, AgentWaitPropsError, EntryQueueProps, RouterProps, SweepProps

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


def test_default_sizes_and_timeouts(quiet: Synth) -> None:
    """The library's defaults (the refund example sets its router's memory from its own cost curve)."""
    _, r = router(quiet)
    _, s = sweep(quiet)
    assert (r["Properties"]["MemorySize"], r["Properties"]["Timeout"]) == (512, 60)
    assert (s["Properties"]["MemorySize"], s["Properties"]["Timeout"]) == (512, 60)
    assert "ReservedConcurrentExecutions" not in r["Properties"]


def test_sizes_timeouts_and_reserved_concurrency_props(features: Synth) -> None:
    _, r = router(features)
    _, s = sweep(features)
    assert (r["Properties"]["MemorySize"], r["Properties"]["Timeout"]) == (2048, 120)
    assert r["Properties"]["ReservedConcurrentExecutions"] == 5
    assert (s["Properties"]["MemorySize"], s["Properties"]["Timeout"]) == (256, 90)


ROUTER_ONLY = (
    "AGENT_WAIT_LEASE_SECONDS",
    "AGENT_WAIT_MAX_RECEIVE_COUNT",
    "AGENT_WAIT_CHECKPOINT_BUCKET",
    "AGENT_WAIT_CHECKPOINT_RETENTION",  # the router alone checkpoints ...
    "AGENT_WAIT_DECIDED_RETENTION",  # ... and decides (the sweep sends deadlines through the queue)
)
SENDERS_AND_LINKS = (
    "AGENT_WAIT_TRUSTED_SENDERS",
    "AGENT_WAIT_START_SENDERS",
    "AGENT_WAIT_ANSWER_SENDERS",
    "AGENT_WAIT_API_URL",
    "AGENT_WAIT_LINK_KEYS_ARN",
    "AGENT_WAIT_LINK_ANNOUNCERS",
)
"""The senders are the router's alone: only it decides what a queue message may do. The link settings are the
router's and the sweep's (both announce `wait.created`, with the same links). Their values are pinned in
test_senders.py; the comparisons here leave them out."""
LINKS = SENDERS_AND_LINKS[3:]


def without(variables: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in variables.items() if k not in names}


def test_environment_with_the_topic_and_no_bus(refund: Synth) -> None:
    common = {
        "AGENT_WAIT_GRAPH": REFUND_GRAPH,
        "AGENT_WAIT_TABLE": ref_of(refund, "AWS::DynamoDB::Table", "QuestionTable"),
        "AGENT_WAIT_CHECKPOINT_TABLE": ref_of(refund, "AWS::DynamoDB::Table", "CheckpointTable"),
        "AGENT_WAIT_QUEUE_URL": {"Ref": "AgentWaitEntryQueue74B3737D"},
        "AGENT_WAIT_DLQ_URL": {"Ref": "AgentWaitEntryQueueDeadLetterQueueB64EFE3E"},
        "AGENT_WAIT_TOPIC_ARN": ref_of(refund, "AWS::SNS::Topic", "Topic"),
        "POWERTOOLS_SERVICE_NAME": "agent-wait",
        "POWERTOOLS_METRICS_NAMESPACE": "AgentWait",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "LOG_LEVEL": "INFO",
        "AGENT_WAIT_CHANNEL_RECORD_RETENTION": "P90D",  # both send on the channels
    }
    _, router_fn = router(refund)
    _, sweep_fn = sweep(refund)
    # The example stack adds its own refunds table for its graph; AgentWait sets the rest.
    refunds = {"REFUND_TABLE": ref_of(refund, "AWS::DynamoDB::Table", "Refunds")}
    router_only = {
        "AGENT_WAIT_LEASE_SECONDS": "120",
        "AGENT_WAIT_MAX_RECEIVE_COUNT": "5",
        "AGENT_WAIT_CHECKPOINT_BUCKET": {"Ref": refund.one("AWS::S3::Bucket")[0]},
        "AGENT_WAIT_CHECKPOINT_RETENTION": "P30D",
        "AGENT_WAIT_DECIDED_RETENTION": "P400D",
    }
    router_env = router_fn["Properties"]["Environment"]["Variables"]
    # The refund stack answers over the API with links on SNS and grants a caller starts; nobody answers by queue.
    assert set(SENDERS_AND_LINKS) - set(router_env) == {"AGENT_WAIT_ANSWER_SENDERS"}
    assert without(router_env, SENDERS_AND_LINKS) == {**common, **refunds, **router_only}
    sweep_env = sweep_fn["Properties"]["Environment"]["Variables"]
    assert without(sweep_env, LINKS) == common
    assert {name: sweep_env[name] for name in LINKS} == {name: router_env[name] for name in LINKS}


def test_environment_with_webhook_no_bus_and_a_sweep_limit(features: Synth) -> None:
    _, r = router(features)
    _, s = sweep(features)
    env = r["Properties"]["Environment"]["Variables"]
    assert env["AGENT_WAIT_WEBHOOK_URL_SECRET_ARN"] == ref_of(features, "AWS::SecretsManager::Secret", "WebhookUrl")
    assert "AGENT_WAIT_WEBHOOK_URL" not in env  # a webhook URL carries a token: never in plain text
    assert env["LOG_LEVEL"] == "DEBUG"
    assert "AGENT_WAIT_BUS_NAME" not in env
    assert "AGENT_WAIT_TOPIC_ARN" in env
    assert "AGENT_WAIT_SWEEP_LIMIT" not in env
    shared = without(env, ROUTER_ONLY + SENDERS_AND_LINKS)
    assert s["Properties"]["Environment"]["Variables"] == {**shared, "AGENT_WAIT_SWEEP_LIMIT": "50"}


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
        functions = synth.resources("AWS::Lambda::Function").values()
        groups = synth.resources("AWS::Logs::LogGroup")
        # One per function, and the answer API's access log (refund only), all with the same retention.
        assert len(groups) == len(functions) + len(synth.resources("AWS::ApiGatewayV2::Stage"))
        assert {group["Properties"]["RetentionInDays"] for group in groups.values()} == {days}
        assert len({json.dumps(fn["Properties"]["LoggingConfig"], sort_keys=True) for fn in functions}) == len(
            functions
        )
        for fn in functions:
            assert fn["Properties"]["LoggingConfig"]["LogGroup"]["Ref"] in groups


def test_function_props_are_checked_together_under_the_names_the_user_writes() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(
            stack,
            "AgentWait",
            graph="not a graph",
            code=inline_code(),
            router=RouterProps(timeout=Duration.minutes(16), memory_size=64, batch_size=11),
            sweep=SweepProps(rate=Duration.seconds(90), limit=0),
            log_level="LOUD",
            oldest_open_question_threshold=Duration.seconds(10),
        )
    assert info.value.problems == (
        "graph must be 'module:attribute', e.g. 'my_app.graph:build_graph'; got 'not a graph'",
        "log_level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL; got 'LOUD'",
        "router.timeout must be between 1 and 900 seconds; got 960 seconds",
        "router.memory_size must be between 128 and 10240 MB; got 64 MB",
        "router.batch_size must be between 1 and 10 records; got 11 records",
        "sweep.rate must be a whole number of minutes; got 90 seconds",
        "sweep.limit must be between 1 and 10000 questions; got 0 questions",
        "oldest_open_question_threshold must be between 60 and 31536000 seconds; got 10 seconds",
    )
    assert str(info.value).startswith("S/AgentWait: 8 invalid prop(s):\n  - graph must be")


def test_unresolved_tokens_are_not_range_checked() -> None:
    from aws_cdk import CfnParameter

    stack = Stack(new_app(), "S")
    memory = CfnParameter(stack, "Memory", type="Number", default=64).value_as_number
    AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), router=RouterProps(memory_size=memory))  # type: ignore[arg-type]


def test_rate_message_names_the_unit() -> None:
    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError, match=re.escape("sweep.rate must be between 1 and 1440 minutes; got 2880")):
        AgentWait(stack, "AgentWait", graph="m:g", code=inline_code(), sweep=SweepProps(rate=Duration.days(2)))


def test_the_router_leases_a_thread_for_its_timeout_plus_a_minute(refund: Synth, features: Synth) -> None:
    # A live invocation never outlives its lease; a dead one blocks its thread only this long.
    for synth, lease in ((refund, "120"), (features, "180")):
        _, r = router(synth)
        _, s = sweep(synth)
        assert r["Properties"]["Environment"]["Variables"]["AGENT_WAIT_LEASE_SECONDS"] == lease
        assert "AGENT_WAIT_LEASE_SECONDS" not in s["Properties"]["Environment"]["Variables"]


def test_the_router_knows_the_entry_queue_receive_count(refund: Synth, quiet: Synth) -> None:
    # The queue AgentWait creates dead-letters after 5 receives; the brought queue in `quiet` after 3.
    for synth, count in ((refund, "5"), (quiet, "3")):
        _, r = router(synth)
        assert r["Properties"]["Environment"]["Variables"]["AGENT_WAIT_MAX_RECEIVE_COUNT"] == count


def test_tracing_is_off_unless_asked_for(refund: Synth, features: Synth) -> None:
    # GIVEN the default (refund) and tracing=Tracing.ACTIVE (features)
    for _, fn in (router(refund), sweep(refund)):
        # THEN by default there is no X-Ray, and Powertools' Tracer is told so
        assert "TracingConfig" not in fn["Properties"]
        assert fn["Properties"]["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == "true"
    for _, fn in (router(features), sweep(features)):
        # ... and on request both functions are traced, with the Tracer on
        assert fn["Properties"]["TracingConfig"] == {"Mode": "Active"}
        assert fn["Properties"]["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == "false"


def test_the_webhook_secret_arn_is_set_on_both_functions(features: Synth) -> None:
    secret = ref_of(features, "AWS::SecretsManager::Secret", "WebhookSecret")
    for _, fn in (router(features), sweep(features)):
        assert fn["Properties"]["Environment"]["Variables"]["AGENT_WAIT_WEBHOOK_SECRET_ARN"] == secret


def test_a_plain_text_webhook_url_still_works_and_warns_how_to_move_it_to_secrets_manager(answering: Synth) -> None:
    # GIVEN an app that still passes webhook_url (the answering variant)
    _, r = router(answering)
    assert (
        r["Properties"]["Environment"]["Variables"]["AGENT_WAIT_WEBHOOK_URL"] == "https://hooks.example.com/agent-wait"
    )
    # THEN the synth warns, saying how to move the URL into Secrets Manager
    warnings = [
        entry.data
        for entry in answering.stack.node.find_child("AgentWait").node.metadata
        if entry.type == "aws:cdk:warning"
    ]
    assert [w for w in warnings if "webhook_url is deprecated" in str(w)] == [
        "webhook_url is deprecated: it is stored in plain text in the router's and the sweep's environment, and a "
        "webhook URL carries a token (Slack, Teams). Store the URL as a Secrets Manager secret and pass "
        'webhook_url_secret= instead (docs/constructs.md, "Moving a webhook URL into Secrets Manager") '
        "[ack: agent-wait:webhook-url-plain-text]"
    ]


def test_the_webhook_url_comes_from_one_place() -> None:
    from aws_cdk import aws_secretsmanager as secretsmanager

    stack = Stack(new_app(), "S")
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            webhook_url="https://hooks.example.com/agent-wait",
            webhook_url_secret=secretsmanager.Secret(stack, "Url"),  # type: ignore[arg-type]
        )
    assert info.value.problems == (
        "webhook_url cannot go with webhook_url_secret: the URL comes from one place; keep webhook_url_secret and "
        "drop webhook_url",
    )


def test_the_receive_count_of_an_imported_queue_is_the_prop_or_five() -> None:
    from aws_cdk import aws_sqs as sqs

    # GIVEN an imported entry queue, whose redrive policy CDK cannot read
    for given, expected in ((None, "5"), (8, "8")):
        stack = Stack(new_app(), "S")
        queue = sqs.Queue.from_queue_arn(stack, "Q", "arn:aws:sqs:us-east-1:123456789012:entry.fifo")
        dlq = sqs.Queue.from_queue_arn(stack, "D", "arn:aws:sqs:us-east-1:123456789012:entry-dlq.fifo")
        # WHEN AgentWait consumes it, with or without queue.max_receive_count
        agent = AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            existing_entry_queue=queue,
            existing_dead_letter_queue=dlq,
            queue=EntryQueueProps(max_receive_count=given),
        )
        # THEN the router is told the given count, or SQS's usual 5
        functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
        (variables,) = [
            fn["Properties"]["Environment"]["Variables"]
            for fn in functions.values()
            if fn["Properties"]["Handler"] == "agent_wait.host.router.handler"
        ]
        assert variables["AGENT_WAIT_MAX_RECEIVE_COUNT"] == expected
        assert agent.entry_queue is queue


def test_receive_count_webhook_secret_and_alarm_topic_props_are_checked() -> None:
    from aws_cdk import aws_secretsmanager as secretsmanager
    from aws_cdk import aws_sns as sns
    from aws_cdk import aws_sqs as sqs

    stack = Stack(new_app(), "S")
    dlq = sqs.Queue(stack, "Dlq", fifo=True)
    queue = sqs.Queue(stack, "Queue", fifo=True, dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=3))
    secret = secretsmanager.Secret(stack, "Secret")
    with pytest.raises(AgentWaitPropsError) as info:
        AgentWait(
            stack,
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            webhook_secret=secret,  # type: ignore[arg-type]
            alarms=False,
            alarm_topic=sns.Topic(stack, "Oncall"),  # type: ignore[arg-type]
            existing_entry_queue=queue,
            existing_dead_letter_queue=dlq,
            queue=EntryQueueProps(max_receive_count=5),
        )
    assert info.value.problems == (
        "webhook_secret signs webhook deliveries, but there is no webhook to deliver to; pass webhook_url_secret "
        "too, or drop it",
        "alarm_topic cannot go with alarms=False: there would be no alarm to notify it; drop one",
        "queue.max_receive_count must match existing_entry_queue's redrive policy, whose maxReceiveCount is 3; got 5",
    )
    with pytest.raises(
        AgentWaitPropsError,
        match=re.escape("queue.max_receive_count describes existing_entry_queue, which is not given; the queue "),
    ):
        AgentWait(
            Stack(new_app(), "T"),
            "AgentWait",
            graph="m:g",
            code=inline_code(),
            queue=EntryQueueProps(max_receive_count=5),
        )
