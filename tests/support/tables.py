"""Tables the tests make on the emulator themselves."""

from __future__ import annotations

from typing import Any


def question_keyed_table(dynamodb: Any, name: str) -> str:
    """A table keyed by `question_id` alone, as the doors' records are (Slack's posts, emails and Teams cards
    sent); returns its name."""
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "question_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "question_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name
