"""`agent_wait.aws.items.until_processed`: the one place a DynamoDB batch call is made again for what DynamoDB left
unprocessed (the ledger's reads by key, the checkpoint saver's batch reads and writes)."""

from __future__ import annotations

from typing import Any

from agent_wait.aws.items import until_processed


class Throttling:
    """A batch call that leaves the last request item unprocessed `times` times."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.requests: list[dict[str, Any]] = []

    def __call__(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        self.requests.append(RequestItems)
        ((table, items),) = RequestItems.items()
        if self.times:
            self.times -= 1
            return {"Responses": {table: items[:-1]}, "UnprocessedItems": {table: items[-1:]}}
        return {"Responses": {table: items}, "UnprocessedItems": {}}


def test_what_dynamodb_leaves_is_sent_again_after_a_doubling_pause() -> None:
    call, pauses = Throttling(times=2), []
    responses, left = until_processed(call, {"t": [1, 2, 3]}, unprocessed="UnprocessedItems", sleep=pauses.append)
    assert [r["t"] for r in call.requests] == [[1, 2, 3], [3], [3]]
    assert pauses == [0.05, 0.1]
    assert [r["Responses"]["t"] for r in responses] == [[1, 2], [], [3]]
    assert left == {}


def test_what_is_still_left_after_the_last_attempt_is_handed_back_without_a_pause_after_it() -> None:
    call, pauses = Throttling(times=99), []
    _, left = until_processed(call, {"t": [1, 2]}, unprocessed="UnprocessedItems", attempts=3, sleep=pauses.append)
    assert len(call.requests) == 3
    assert pauses == [0.05, 0.1]
    assert left == {"t": [2]}
