"""The refund stack's template, deployed on the emulator, keeps the entry queues' high-throughput FIFO mode."""

from __future__ import annotations

from typing import Any

from agent_wait.contract.schema import ENTRY_QUEUE


def test_the_emulated_entry_queue_and_dead_letter_queue_are_high_throughput_fifo(world: Any) -> None:
    sqs = world.local.client("sqs")
    for url in (world.local.queue_url, world.local.environment["AGENT_WAIT_DLQ_URL"]):
        attributes = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["FifoQueue", "DeduplicationScope", "FifoThroughputLimit"]
        )["Attributes"]
        assert attributes == {
            "FifoQueue": "true",
            "DeduplicationScope": ENTRY_QUEUE.deduplication_scope,
            "FifoThroughputLimit": ENTRY_QUEUE.fifo_throughput_limit,
        }
