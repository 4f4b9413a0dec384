"""Tables the local stack makes itself, where the template has none for a door it runs locally."""

from __future__ import annotations

from typing import Any

__all__ = ("question_keyed_table",)


def question_keyed_table(dynamodb: Any, name: str) -> str:
    """Create a table keyed by `question_id` alone, as the doors' records are (the emails and Teams cards sent), in
    the emulator; returns its name."""
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "question_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "question_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name
