"""Messages received from the emulated entry queue, shaped as the Lambda event source hands them to the router."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

__all__ = ("event_record",)


def event_record(message: Mapping[str, Any], arn: str, *, shift: timedelta = timedelta(0)) -> dict[str, Any]:
    """An SQS event record in the shape the Lambda event source delivers; `SentTimestamp` moved by `shift`."""
    attributes = dict(message.get("Attributes", {}))
    sent = int(attributes.get("SentTimestamp") or time.time() * 1000)
    sent_timestamp = str(sent + int(shift.total_seconds() * 1000))
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {
            "ApproximateReceiveCount": attributes.get("ApproximateReceiveCount", "1"),
            "SentTimestamp": sent_timestamp,
            "SenderId": attributes.get("SenderId", "local"),
            "ApproximateFirstReceiveTimestamp": attributes.get("ApproximateFirstReceiveTimestamp", "0"),
            "SequenceNumber": attributes.get("SequenceNumber", "0"),
            "MessageGroupId": attributes.get("MessageGroupId", ""),
            "MessageDeduplicationId": attributes.get("MessageDeduplicationId", ""),
            **({"AWSTraceHeader": attributes["AWSTraceHeader"]} if attributes.get("AWSTraceHeader") else {}),
        },
        # What the sender attached (the trace context: `traceparent`, `tracestate`), in the event's shape.
        "messageAttributes": {
            name: {"stringValue": value.get("StringValue"), "dataType": value.get("DataType", "String")}
            for name, value in dict(message.get("MessageAttributes", {})).items()
        },
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": "us-east-1",
    }
