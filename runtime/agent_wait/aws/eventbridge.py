"""`EventBridgeAnnounce`: put each envelope on an event bus, and treat a per-entry failure as a failure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_wait.aws._clients import AwsDeliveryError, make_client, translate_errors, wire_json
from agent_wait.contract.announcer import BaseAnnounce
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.errors import ArgumentError

__all__ = ("DEFAULT_SOURCE", "EventBridgeAnnounce")

DEFAULT_SOURCE = "agent-wait"
"""The event `source` unless another is given; rules match on it."""


class EventBridgeAnnounce(BaseAnnounce):
    """Put each envelope on an EventBridge bus: `DetailType` is the envelope type, `Detail` the envelope.

    Rules on the bus fan a question out (a chat channel, a ticket, an audit log) without the agent
    knowing any of them. `PutEvents` reports per-entry failures inside an HTTP 200 response; this
    announcer reads `FailedEntryCount` and each entry's `ErrorCode` and reports them as a failed
    delivery, because a publish that failed silently is the one failure nothing else would catch.

    Example:
        >>> import boto3
        >>> bus = EventBridgeAnnounce("approvals", client=boto3.client("events", "us-east-1"))
        >>> bus.source
        'agent-wait'

    Args:
        bus_name: the event bus name or ARN.
        source: the events' `source`; EventBridge reserves names starting with `aws.`.
        client: a boto3 EventBridge (`events`) client; one is built (short timeouts, few retries) when None.
        region_name: the region of the client built here; cannot be combined with `client`.
        delivers: the transitions to put on the bus; all by default.

    Raises:
        ArgumentError (a ValueError): `bus_name` is empty, or `source` is empty, too long or starts with `aws.`.
    """

    name = "eventbridge"

    def __init__(
        self,
        bus_name: str,
        *,
        source: str = DEFAULT_SOURCE,
        client: Any = None,
        region_name: str | None = None,
        delivers: Iterable[Transition | str] | None = None,
    ) -> None:
        super().__init__(delivers=delivers)
        if not isinstance(bus_name, str) or not bus_name:
            raise ArgumentError(
                f"EventBridgeAnnounce bus_name must be a bus name or ARN such as 'default'; got {bus_name!r}"
            )
        if not isinstance(source, str) or not 1 <= len(source) <= 256 or source.lower().startswith("aws."):
            raise ArgumentError(
                "EventBridgeAnnounce source must be 1-256 characters and must not start with 'aws.' "
                f"(reserved for AWS services), e.g. 'agent-wait' or 'com.example.refunds'; got {source!r}"
            )
        self.bus_name = bus_name
        self.source = source
        self.client = make_client("events", client=client, region_name=region_name, owner="EventBridgeAnnounce")

    def build_entry(self, envelope: WaitEnvelope) -> dict[str, Any]:
        """The one `PutEvents` entry `deliver` sends."""
        return {
            "Source": self.source,
            "DetailType": envelope.type,
            "Detail": wire_json(envelope),
            "EventBusName": self.bus_name,
        }

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        action = f"EventBridge PutEvents to bus {self.bus_name}"
        with translate_errors(action):
            response = self.client.put_events(Entries=[self.build_entry(envelope)])
        failed = int(response.get("FailedEntryCount") or 0)
        errors = [entry for entry in response.get("Entries") or () if entry.get("ErrorCode")]
        if failed or errors:
            codes = "; ".join(f"{e['ErrorCode']}: {e.get('ErrorMessage') or 'no message'}" for e in errors)
            raise AwsDeliveryError(
                f"{action} failed inside an HTTP 200: FailedEntryCount={failed}; {codes or 'no entry error code'}",
                code=errors[0]["ErrorCode"] if errors else None,
            )
