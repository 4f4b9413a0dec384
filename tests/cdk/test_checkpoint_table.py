"""The checkpoint table: the shape DynamoDBSaver needs, and only the calls it makes."""

from __future__ import annotations

from tests.cdk.conftest import Synth, actions_on, getatt, statements

CHECKPOINT_KEYS = [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]


def test_checkpoint_table_has_the_dynamodb_saver_shape(variant: Synth) -> None:
    _, table = variant.one("AWS::DynamoDB::Table", KeySchema=CHECKPOINT_KEYS)
    props = table["Properties"]
    assert props["AttributeDefinitions"] == [
        {"AttributeName": "PK", "AttributeType": "S"},
        {"AttributeName": "SK", "AttributeType": "S"},
    ]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["TimeToLiveSpecification"] == {"AttributeName": "ttl", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["SSESpecification"]["SSEEnabled"] is True
    assert "GlobalSecondaryIndexes" not in props


def test_checkpoint_table_is_retained_unless_told(quiet: Synth, refund: Synth) -> None:
    for synth, policy in ((quiet, "Retain"), (refund, "Delete")):
        logical_id, _ = synth.one("AWS::DynamoDB::Table", KeySchema=CHECKPOINT_KEYS)
        assert synth.json["Resources"][logical_id]["DeletionPolicy"] == policy


def test_only_the_router_touches_checkpoints_with_exactly_the_saver_calls(refund: Synth) -> None:
    table_id, _ = refund.one("AWS::DynamoDB::Table", KeySchema=CHECKPOINT_KEYS)
    arn = getatt(table_id)
    router = actions_on(statements(refund, "AgentWaitRouter"))
    assert router[arn] == {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:DeleteItem",
        "dynamodb:UpdateItem",  # the TTL of what a waiting thread needs: held, then let go
    }
    assert arn not in actions_on(statements(refund, "AgentWaitSweep"))
