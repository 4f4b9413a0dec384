"""Which pushes a question has sent: one claim per (step, device), so a redelivered event pushes nothing twice.

Every push has a key of its own: `created:<device>`, `reminder:<n>:<device>`, `escalated:<n>:<device>` (the device
is the subscription's id, `subscriptions.device_id`), its `address` the person's key. It is claimed before it is sent
and marked with the push service's id for it (its `Location`) after. A claim with an id was sent: a redelivery skips
it. A claim without one may or may not have reached the push service (the process died, or the service failed, in
between); a push service cannot be asked what it took, so that one push is sent again. That window is the only
at-least-once part.

The record is the one every channel keeps (`agent_wait.channels.records`), as sends (`agent_wait.channels.sends`,
which email and Teams keep theirs in too); these are its names for pushes.
"""

from __future__ import annotations

from agent_wait.channels.sends import KEEP_FOR, SENDS, DynamoDbSends, InMemorySends, Send, Sends

__all__ = ("KEEP_FOR", "SENDS", "DynamoDbPushSends", "InMemoryPushSends", "PushSends", "Send")

PushSends = Sends
"""The record of a question's pushes (`agent_wait.channels.sends.Sends`)."""
InMemoryPushSends = InMemorySends
"""`PushSends` in a dict (tests, the local preview)."""
DynamoDbPushSends = DynamoDbSends
"""`PushSends` in a DynamoDB table whose partition key is `question_id` (`AGENT_WAIT_PUSH_SENDS_TABLE`)."""
