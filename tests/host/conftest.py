"""Host fixtures: the question table on the embedded moto server, shaped by agent_wait.schema."""

from __future__ import annotations

from typing import Any

import pytest

from agent_wait.schema import QUESTION_TABLE


def create_question_table(client: Any, name: str) -> None:
    keys = {QUESTION_TABLE.partition_key, QUESTION_TABLE.sort_key}
    for index in QUESTION_TABLE.indexes:
        keys |= {index.partition_key, index.sort_key}
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in sorted(keys)],
        KeySchema=[
            {"AttributeName": QUESTION_TABLE.partition_key, "KeyType": "HASH"},
            {"AttributeName": QUESTION_TABLE.sort_key, "KeyType": "RANGE"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": index.name,
                "KeySchema": [
                    {"AttributeName": index.partition_key, "KeyType": "HASH"},
                    {"AttributeName": index.sort_key, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index in QUESTION_TABLE.indexes
        ],
    )


@pytest.fixture(scope="session")
def question_table(moto_server: str) -> tuple[str, Any]:
    """One question table for the session (rules use fresh ids); yields (name, client)."""
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=moto_server)
    create_question_table(client, "questions-shared")
    return "questions-shared", client
