"""`RetentionProps`: how long `AgentWait` keeps what it stores, so nothing is kept for ever unless asked.

Checkpoints go 30 days after a thread last wrote them (the checkpoint table's TTL, and the checkpoint bucket's
lifecycle rule for offloaded objects), but never while the thread waits on them; decided question rows 400 days after
their decision; channel records (Slack posts, emails, Teams cards) 90 days after their last send. Each is set as the
functions' variable the runtime reads (`AGENT_WAIT_CHECKPOINT_RETENTION`, `AGENT_WAIT_DECIDED_RETENTION`,
`AGENT_WAIT_CHANNEL_RECORD_RETENTION`); None keeps that store for ever (`never`). What is kept, for how long, and what
it costs: docs/operate.md, "What is kept, and for how long".
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration

from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._defaults import FOUR_HUNDRED_DAYS, NINETY_DAYS, THIRTY_DAYS
from agent_wait_cdk._validate import PropChecks

__all__ = ("CHECKPOINT_OBJECT_TAG", "RetentionProps", "object_days")

CHECKPOINT_OBJECT_TAG = "ttl-days"
"""The tag key the router's saver writes on every offloaded object (`ttl-days=<days>`), as `langgraph_checkpoint_aws`
does with `ttl_seconds`; `CheckpointBucket`'s lifecycle rule expires the objects tagged with its own value."""
_NEVER = "never"
_MAXIMUM = Duration.days(3650)


def object_days(checkpoints: Duration) -> int:
    """The days an offloaded object lives after it was written: one more than its checkpoint's items, since S3 counts
    to the next midnight and DynamoDB deletes some time after the TTL, so no object goes before its checkpoint."""
    return int(checkpoints.to_days()) + 1


@dataclass(frozen=True, kw_only=True)
class RetentionProps:
    """How long `AgentWait` keeps what it stores, as `AgentWait(retention=RetentionProps(...))` takes it.

    Example:
        RetentionProps(checkpoints=Duration.days(90), decisions=Duration.days(730))
    """

    checkpoints: Duration | None = THIRTY_DAYS
    """A thread's checkpoints after it last wrote them, whole days from 14 to 3650 (the router's
    `AGENT_WAIT_CHECKPOINT_RETENTION`; the checkpoint bucket's lifecycle rule). Default 30 days: longer than any message
    can wait on SQS (14 days), a month to retry a failed thread, and as long as the functions' logs. A thread waiting
    on a question, or failed and waiting for its retry, keeps the checkpoint it waits on until it moves on, whatever
    this says. None: kept for ever."""
    decisions: Duration | None = FOUR_HUNDRED_DAYS
    """A decided question's row after its decision, 1 to 3650 days (the router's and the answer API's
    `AGENT_WAIT_DECIDED_RETENTION`). Default 400 days: a year of audit trail and a month to export it; export it to keep
    it longer (docs/audit.md). An open question is never expired this way. None: kept for ever."""
    channel_records: Duration | None = NINETY_DAYS
    """A channel's record of a question's messages after its last send, 1 to 3650 days (every function's
    `AGENT_WAIT_CHANNEL_RECORD_RETENTION`). Default 90 days: what updates a Slack message or an email thread after the
    decision, long after anyone clicks. None: kept for ever."""

    def check(self, checks: PropChecks) -> None:
        """Each retention in its range (tokens are skipped); checkpoints in whole days, which S3's rule counts."""
        checks.duration_between(
            "checkpoints", self.checkpoints, minimum=Duration.days(14), maximum=_MAXIMUM, unit="days"
        )
        checks.duration_between("decisions", self.decisions, minimum=Duration.days(1), maximum=_MAXIMUM, unit="days")
        checks.duration_between(
            "channel_records", self.channel_records, minimum=Duration.days(1), maximum=_MAXIMUM, unit="days"
        )
        days = self.checkpoints
        if days is not None and not days.is_unresolved() and days.to_seconds() % 86_400:
            checks.fail("checkpoints", f"must be whole days (S3's lifecycle rule counts days); got {_iso(days)}")

    def router_variables(self) -> dict[str, str]:
        """The router's: it checkpoints, decides and sends."""
        return {
            shapes.ENV_CHECKPOINT_RETENTION: _iso(self.checkpoints),
            shapes.ENV_DECIDED_RETENTION: _iso(self.decisions),
            shapes.ENV_CHANNEL_RECORD_RETENTION: _iso(self.channel_records),
        }

    def sweep_variables(self) -> dict[str, str]:
        """The sweep's: it sends reminders and escalation steps, never decides."""
        return {shapes.ENV_CHANNEL_RECORD_RETENTION: _iso(self.channel_records)}

    def answer_api_variables(self) -> dict[str, str]:
        """The answer API's: it decides, and updates what the channels sent."""
        return {
            shapes.ENV_DECIDED_RETENTION: _iso(self.decisions),
            shapes.ENV_CHANNEL_RECORD_RETENTION: _iso(self.channel_records),
        }


def _iso(retention: Duration | None) -> str:
    """As the runtime reads it: `P<days>D` (or `PT<seconds>S` for part of a day), or `never`."""
    if retention is None:
        return _NEVER
    seconds = int(retention.to_seconds())
    return f"P{seconds // 86_400}D" if seconds % 86_400 == 0 else f"PT{seconds}S"
