"""Which emails a question has sent: one claim per (step, address), so a redelivered event does not email twice.

Every email has a key of its own: `created:<address>`, `reminder:<n>:<address>`, `escalated:<n>:<address>`,
`extended:<n>:<address>`, `outcome:<address>`. It is claimed before it is sent and its SES message id recorded
after. A claim with a message id was sent: a redelivery skips it. A claim without one may or may not have reached
SES (the process died, or SES failed, in between); SES cannot be asked what it sent, so that one email is sent
again, with the same links (they are made from the claim's time). That window is the only at-least-once part.

The record is the one every channel keeps (`agent_wait.channels.records`), as sends (`agent_wait.channels.sends`,
which Teams keeps its cards in too); these are its names for email.
"""

from __future__ import annotations

from agent_wait.channels.sends import KEEP_FOR, SENDS, DynamoDbSends, InMemorySends, Send, Sends

__all__ = ("KEEP_FOR", "SENDS", "DynamoDbEmailSends", "EmailSends", "InMemoryEmailSends", "Send")

EmailSends = Sends
"""The record of a question's emails (`agent_wait.channels.sends.Sends`)."""
InMemoryEmailSends = InMemorySends
"""`EmailSends` in a dict (tests, the local preview)."""
DynamoDbEmailSends = DynamoDbSends
"""`EmailSends` in a DynamoDB table whose partition key is `question_id` (`AGENT_WAIT_EMAIL_SENDS_TABLE`)."""
