"""Physical names for the resources `AgentWait` creates, from `resource_name_prefix`; None: CloudFormation's own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aws_cdk import Aws

from agent_wait_cdk._validate import PropChecks

__all__ = ("MAX_PREFIX_LENGTH", "ResourceNames", "check_resource_name_prefix")

MAX_PREFIX_LENGTH = 20
"""The longest prefix every name still fits: the checkpoint bucket's `<prefix>-checkpoints-<account>-<region>` must
stay within S3's 63 characters (12 for the account, up to 14 for the region)."""
_PREFIX = re.compile(r"[a-z](?:[a-z0-9-]*[a-z0-9])?")
"""Lowercase, because S3 bucket names are; no trailing hyphen, so `<prefix>-<role>` never doubles it."""


def check_resource_name_prefix(checks: PropChecks, prefix: str | None) -> None:
    """A prefix that can name an S3 bucket, a Lambda function, queues, tables, a topic and a bus alike."""
    if prefix is None:
        return
    if not _PREFIX.fullmatch(prefix) or len(prefix) > MAX_PREFIX_LENGTH:
        checks.fail(
            "resource_name_prefix",
            f"must be 1 to {MAX_PREFIX_LENGTH} lowercase letters, digits and hyphens, starting with a letter and not "
            "ending with a hyphen (it names S3 buckets and Lambda functions too, whose names are short and "
            f"lowercase), such as 'refunds-prod'; got {prefix!r}",
        )


@dataclass(frozen=True)
class ResourceNames:
    """The name of each resource `AgentWait` creates: `<prefix>-<role>`; every one None without a prefix."""

    prefix: str | None

    def _named(self, role: str) -> str | None:
        return f"{self.prefix}-{role}" if self.prefix else None

    @property
    def question_table(self) -> str | None:
        return self._named("questions")

    @property
    def checkpoint_table(self) -> str | None:
        return self._named("checkpoints")

    @property
    def slack_messages_table(self) -> str | None:
        return self._named("slack-messages")

    @property
    def email_sends_table(self) -> str | None:
        return self._named("email-sends")

    @property
    def teams_sends_table(self) -> str | None:
        return self._named("teams-sends")

    @property
    def push_subscriptions_table(self) -> str | None:
        return self._named("push-subscriptions")

    @property
    def push_sends_table(self) -> str | None:
        return self._named("push-sends")

    @property
    def email_configuration_set(self) -> str | None:
        return self._named("email")

    @property
    def checkpoint_bucket(self) -> str | None:
        """Bucket names are global: the account and the region keep one app's name from another's."""
        return self._named(f"checkpoints-{Aws.ACCOUNT_ID}-{Aws.REGION}")

    @property
    def entry_queue(self) -> str | None:
        """The dead-letter queue is named after it, `<prefix>-entry-dlq.fifo` (`EntryQueue`)."""
        return self._named("entry.fifo")

    def topic(self, fifo: bool) -> str | None:
        return self._named("announcements.fifo" if fifo else "announcements")

    @property
    def bus(self) -> str | None:
        return self._named("announcements")

    @property
    def router(self) -> str | None:
        return self._named("router")

    @property
    def sweep(self) -> str | None:
        return self._named("sweep")
