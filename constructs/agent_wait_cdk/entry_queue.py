"""`EntryQueue`: the one FIFO queue that starts and answers arrive on, with its FIFO dead-letter queue; and
`EntryQueueProps`, its props as `AgentWait` takes them."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from aws_cdk import Duration, RemovalPolicy, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_wait_cdk import _grants
from agent_wait_cdk._defaults import FOUR_DAYS, FOURTEEN_DAYS, SIX_MINUTES
from agent_wait_cdk._shapes import ENTRY_QUEUE_MAX_RECEIVE_COUNT
from agent_wait_cdk._validate import PropChecks

__all__ = ("EntryQueue", "EntryQueueProps")

_SQS_MIN_RETENTION, _SQS_MAX_RETENTION = Duration.seconds(60), Duration.days(14)
_SQS_MAX_VISIBILITY = Duration.hours(12)


@dataclass(frozen=True, kw_only=True)
class EntryQueueProps:
    """The entry queue's props, as `AgentWait(queue=EntryQueueProps(...))` takes them.

    `visibility_timeout` and `retention_period` shape the queue AgentWait creates (the `EntryQueue` props of
    those names); `max_receive_count` describes the queue you bring with `existing_entry_queue`. The brought
    queues themselves stay flat on AgentWait (`existing_entry_queue`, `existing_dead_letter_queue`), as every
    `existing_*` does: a resource is brought or shaped, never both. Each default is None, resolved by
    AgentWait, so a value given where it cannot apply is refused rather than ignored.

    Example:
        EntryQueueProps(retention_period=Duration.days(7))
    """

    visibility_timeout: Duration | None = None
    """How long a received message stays hidden, at most 12 hours. Default None: six times `router.timeout`
    (6 minutes with the default), AWS's advice for a queue a Lambda function consumes, so a retried batch is
    not seen twice while the first attempt runs; a smaller value is refused. Not with `existing_entry_queue`."""
    retention_period: Duration | None = None
    """How long an unreceived message waits, 1 minute to 14 days. Default None: 4 days, the SQS default, long
    enough to ride out a weekend outage of the router. Not with `existing_entry_queue`."""
    max_receive_count: int | None = None
    """The `maxReceiveCount` of `existing_entry_queue`'s redrive policy, 1 to 1,000, set as the router's
    `AGENT_WAIT_MAX_RECEIVE_COUNT` so it dead-letters a message it still cannot apply on its last receive,
    with its reason. Default None: read from the queue when it is defined in this app (an `sqs.Queue` with
    `dead_letter_queue`), else 5, the SQS console's default and AgentWait's own. Only with
    `existing_entry_queue`: the queue AgentWait creates uses 5."""

    def as_kwargs(self) -> dict[str, Any]:
        """These props as keyword arguments of `EntryQueue.check_props` (None: not given)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


class EntryQueue(Construct):
    """Starts and answers, grouped by thread (`MessageGroupId`), delivered in order to the router.

    FIFO with content-based deduplication; a message received `max_receive_count` times without success
    moves to a FIFO dead-letter queue. Both queues are encrypted at rest and refuse plain HTTP.

    Both queues run in high-throughput FIFO mode: deduplication is scoped to the message group and the
    throughput quota applies per message group, not to the whole queue (docs/scaling.md). One thread is one
    group (`agent_wait.contract.messages.group_id_for`), and every deduplication id agent-wait sends is made for one
    thread's message, so a group-scoped id loses nothing; queue-wide scope would only let one thread's
    message swallow another thread's that happens to reuse its id (an API `Idempotency-Key`, say). There
    is no prop for the default mode: it caps the queue's sends and gives agent-wait nothing back. A queue
    brought with `existing_entry_queue` keeps its own mode.

    Example:
        entry = EntryQueue(self, "Entry", visibility_timeout=Duration.minutes(6))
        entry.grant_send(api_role)

    Args:
        scope: the parent construct.
        id: the construct id.
        visibility_timeout: how long a received message stays hidden. Default 6 minutes: AWS asks for at
            least six times the consuming function's timeout (the router's default is 1 minute), so a
            retried batch cannot be seen twice while the first attempt still runs.
        retention_period: how long an unreceived message waits. Default 4 days (the SQS default): long
            enough to ride out a weekend outage of the router.
        dead_letter_retention_period: Default 14 days, the SQS maximum: a dead letter is evidence and
            someone has to read it.
        max_receive_count: receives before a message is dead-lettered. Default 5 (`agent_wait.contract.schema`):
            enough for transient throttling, few enough that a poison message parks its thread briefly.
        encryption_key: a customer managed KMS key for both queues. Default None: SQS managed encryption
            (SSE-SQS), which needs no key policy and no KMS permissions for senders.
        queue_name: a fixed name (must end in `.fifo`). Default None: generated.
        removal_policy: Default RETAIN: unanswered starts and answers are state too.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        visibility_timeout: Duration = SIX_MINUTES,
        retention_period: Duration = FOUR_DAYS,
        dead_letter_retention_period: Duration = FOURTEEN_DAYS,
        max_receive_count: int = ENTRY_QUEUE_MAX_RECEIVE_COUNT,
        encryption_key: kms.IKey | None = None,
        queue_name: str | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        super().__init__(scope, id)
        checks = PropChecks(self.node.path)
        self.check_props(
            checks,
            visibility_timeout=visibility_timeout,
            retention_period=retention_period,
            dead_letter_retention_period=dead_letter_retention_period,
            max_receive_count=max_receive_count,
            queue_name=queue_name,
        )
        checks.raise_if_any()

        encryption = sqs.QueueEncryption.KMS if encryption_key else sqs.QueueEncryption.SQS_MANAGED
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            fifo=True,
            # The router dead-letters a malformed message itself, with its reason; content-based
            # deduplication spares it from inventing a deduplication id.
            content_based_deduplication=True,
            retention_period=dead_letter_retention_period,
            encryption=encryption,
            encryption_master_key=encryption_key,
            enforce_ssl=True,
            queue_name=queue_name.removesuffix(".fifo") + "-dlq.fifo" if queue_name else None,
            removal_policy=removal_policy,
            # High throughput here too: when the router fails wholesale (a bad deploy) it dead-letters at the
            # rate messages arrive, and a queue-wide quota would throttle those sends into retries. Its own
            # deduplication ids name the thread and the message, so group scope loses nothing.
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        )
        self.queue = sqs.Queue(
            self,
            "Resource",
            fifo=True,
            content_based_deduplication=True,
            visibility_timeout=visibility_timeout,
            retention_period=retention_period,
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dead_letter_queue, max_receive_count=max_receive_count),
            encryption=encryption,
            encryption_master_key=encryption_key,
            enforce_ssl=True,
            queue_name=queue_name,
            removal_policy=removal_policy,
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        )

    @staticmethod
    def check_props(
        checks: PropChecks,
        *,
        visibility_timeout: Duration | None = None,
        retention_period: Duration | None = None,
        dead_letter_retention_period: Duration | None = None,
        max_receive_count: int | None = None,
        queue_name: str | None = None,
    ) -> None:
        """Record every out-of-range prop in `checks` (SQS's own limits); None means not given."""
        checks.duration_between(
            "visibility_timeout", visibility_timeout, minimum=Duration.seconds(0), maximum=_SQS_MAX_VISIBILITY
        )
        for field, value in (
            ("retention_period", retention_period),
            ("dead_letter_retention_period", dead_letter_retention_period),
        ):
            checks.duration_between(field, value, minimum=_SQS_MIN_RETENTION, maximum=_SQS_MAX_RETENTION)
        checks.int_between("max_receive_count", max_receive_count, minimum=1, maximum=1000, unit="receives")
        if queue_name is not None and not Token.is_unresolved(queue_name) and not queue_name.endswith(".fifo"):
            checks.fail("queue_name", f"must end in '.fifo' (the entry queue is FIFO); got {queue_name!r}")

    @property
    def queue_url(self) -> str:
        return self.queue.queue_url

    def grant_send(self, grantee: iam.IGrantable) -> iam.Grant:
        """`sqs:SendMessage`, `GetQueueAttributes`, `GetQueueUrl` on the entry queue (and its key, if any)."""
        return _grants.grant_send(grantee, self.queue)

    def grant_send_dead_letters(self, grantee: iam.IGrantable) -> iam.Grant:
        """The same send actions on the dead-letter queue: the router parks malformed messages there."""
        return _grants.grant_send(grantee, self.dead_letter_queue)


def check_max_receive_count(checks: PropChecks, queue: sqs.IQueue | None, count: int | None) -> None:
    """A receive count describes a brought queue, and must be the one its redrive policy says, when known.

    `checks` names the count's field (`queue.max_receive_count` through `AgentWait`); its range is
    `EntryQueue.check_props`'s.
    """
    if count is None:
        return
    if queue is None:
        checks.fail(
            "max_receive_count",
            f"describes existing_entry_queue, which is not given; the queue AgentWait creates uses "
            f"{ENTRY_QUEUE_MAX_RECEIVE_COUNT}",
        )
        return
    known = redrive_count(queue)
    if known is not None and not Token.is_unresolved(count) and count != known:
        checks.fail(
            "max_receive_count",
            f"must match existing_entry_queue's redrive policy, whose maxReceiveCount is {known}; got {count}",
        )


def redrive_count(queue: sqs.IQueue) -> int | None:
    """The `maxReceiveCount` of a queue defined in this app with a dead-letter queue; None when unknown."""
    redrive = queue.dead_letter_queue if isinstance(queue, sqs.Queue) else None
    if redrive is None or Token.is_unresolved(redrive.max_receive_count):
        return None
    return int(redrive.max_receive_count)
