"""Retention by default: the synthesized stack keeps nothing for ever unless asked. The router, the sweep and the
answer API are told how long each store is kept (`RetentionProps`), the tables expire items on `ttl`, and the
checkpoint bucket expires the objects the saver tags, a day after their checkpoints.

The default, the answer API and the changed retention are the session's `refund`, `answering` and `features` stacks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from aws_cdk import Duration, Stack
from tests.cdk.conftest import EXAMPLES, Synth, new_app

from agent_wait.contract.schema import Settings
from agent_wait.host import HostSettings
from agent_wait_cdk import AgentWait, AgentWaitPropsError, RetentionProps

CHECKPOINTS, DECIDED, CHANNELS = (
    Settings.CHECKPOINT_RETENTION.value,
    Settings.DECIDED_RETENTION.value,
    Settings.CHANNEL_RECORD_RETENTION.value,
)


def _environment(synth: Synth, handler: str) -> dict[str, Any]:
    (function,) = [
        f["Properties"]
        for f in synth.resources("AWS::Lambda::Function").values()
        if f["Properties"].get("Handler", "").endswith(f"{handler}.handler")
    ]
    return function["Environment"]["Variables"]


def _retention(variables: dict[str, Any]) -> dict[str, Any]:
    return {name: variables[name] for name in (CHECKPOINTS, DECIDED, CHANNELS) if name in variables}


def test_by_default_checkpoints_go_after_30_days_decisions_after_400_and_channel_records_after_90(
    refund: Synth,
) -> None:
    # GIVEN the refund stack as app.py builds it (no retention prop)
    # THEN the router is told each retention, the sweep only the channel records' (it never decides nor checkpoints)
    assert _retention(_environment(refund, "router")) == {CHECKPOINTS: "P30D", DECIDED: "P400D", CHANNELS: "P90D"}
    assert _retention(_environment(refund, "sweep")) == {CHANNELS: "P90D"}
    # and the runtime reads them as the defaults it keeps anyway
    needs = {
        **dict.fromkeys((Settings.TABLE.value, Settings.CHECKPOINT_TABLE.value), "x"),
        Settings.GRAPH.value: "m:g",
        Settings.DLQ_URL.value: "https://sqs.example/dlq.fifo",
    }
    told = HostSettings.from_env("router", needs | _retention(_environment(refund, "router")))
    unset = HostSettings.from_env("router", needs)
    kept = ("checkpoint_retention", "decided_retention", "channel_record_retention")
    assert [getattr(told, name) for name in kept] == [getattr(unset, name) for name in kept]


def test_by_default_the_bucket_expires_tagged_objects_a_day_after_their_checkpoints(refund: Synth) -> None:
    # GIVEN the refund stack's checkpoint bucket
    _, bucket = refund.one("AWS::S3::Bucket")
    # THEN its one lifecycle rule expires, 31 days after they were written, the objects the saver tags for 30 days
    assert bucket["Properties"]["LifecycleConfiguration"] == {
        "Rules": [
            {
                "Id": "CheckpointRetention",
                "Status": "Enabled",
                "ExpirationInDays": 31,
                "TagFilters": [{"Key": "ttl-days", "Value": "31"}],
            }
        ]
    }
    # the very tag the runtime's saver writes for the router's 30 days
    from agent_wait.langgraph.checkpoint.retention import ObjectTag

    assert ObjectTag.for_retention(timedelta(days=30)).query == "ttl-days=31"


def test_the_tables_expire_items_on_their_ttl_attribute(refund: Synth) -> None:
    # GIVEN the refund stack's tables (the example's own refunds table aside)
    tables = {k: t for k, t in refund.resources("AWS::DynamoDB::Table").items() if not k.startswith("Refunds")}
    # THEN the question table and the checkpoint table expire items on `ttl`
    assert sorted(k.split("Table")[0] for k in tables) == ["AgentWaitCheckpoint", "AgentWaitQuestion"]
    for table in tables.values():
        assert table["Properties"]["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}


def test_the_answer_api_keeps_decisions_and_channel_records_as_the_router_does(answering: Synth) -> None:
    api, router = _environment(answering, "api"), _environment(answering, "router")
    assert _retention(api) == {DECIDED: "P400D", CHANNELS: "P90D"}
    assert (api[DECIDED], api[CHANNELS]) == (router[DECIDED], router[CHANNELS])


def test_retention_props_set_each_store_and_none_keeps_it_for_ever(features: Synth) -> None:
    # GIVEN RetentionProps(checkpoints=90 days, decisions=None, channel_records=7 days)
    # THEN the functions are told so, `never` for the decisions
    assert _retention(_environment(features, "router")) == {CHECKPOINTS: "P90D", DECIDED: "never", CHANNELS: "P7D"}
    assert _retention(_environment(features, "sweep")) == {CHANNELS: "P7D"}
    # and the bucket's rule follows the checkpoints' retention
    _, bucket = features.one("AWS::S3::Bucket")
    (rule,) = bucket["Properties"]["LifecycleConfiguration"]["Rules"]
    assert (rule["ExpirationInDays"], rule["TagFilters"]) == (91, [{"Key": "ttl-days", "Value": "91"}])


def test_a_retention_out_of_range_is_refused_with_every_other_problem() -> None:
    # GIVEN checkpoints kept less than SQS may keep a message, decisions for no time, channel records past ten years
    retention = RetentionProps(
        checkpoints=Duration.days(7), decisions=Duration.hours(1), channel_records=Duration.days(4000)
    )
    # WHEN AgentWait is built
    with pytest.raises(AgentWaitPropsError) as refused:
        AgentWait(Stack(new_app(), "Refused"), "AgentWait", graph="m:g", graph_source=[EXAMPLES], retention=retention)
    # THEN one error names each
    message = str(refused.value)
    assert "retention.checkpoints must be between 14 and 3650 days; got 7 days" in message
    assert "retention.decisions must be between 1 and 3650 days; got 0.0416667 days" in message
    assert "retention.channel_records must be between 1 and 3650 days; got 4000 days" in message


def test_checkpoints_must_be_kept_whole_days() -> None:
    with pytest.raises(AgentWaitPropsError, match=r"retention\.checkpoints must be whole days .*; got PT1299600S"):
        AgentWait(
            Stack(new_app(), "HalfDay"),
            "AgentWait",
            graph="m:g",
            graph_source=[EXAMPLES],
            retention=RetentionProps(checkpoints=Duration.hours(361)),
        )
