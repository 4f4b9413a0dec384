"""What `agent-wait dev` shows at `/dev/slack`: each question's Slack message as it would look, with no workspace.

The open questions first, then the latest decided ones, read from the stack's question table here and drawn by the
Slack channel (`agent_wait.channels.slack.preview.questions_page`) as one static page.
"""

from __future__ import annotations

from typing import Any

__all__ = ("preview_questions",)


def preview_questions(local: Any, *, limit: int = 20) -> str:
    """The preview page of the questions on `local` (an `EmulatedStack`), at most `limit` of them."""
    from agent_wait.aws.ledger import DynamoDbLedger
    from agent_wait.channels.slack.preview import questions_page
    from agent_wait.contract.schema import QuestionStatus

    ledger = DynamoDbLedger(local.table, client=local.client("dynamodb"))
    records = list(ledger.page(QuestionStatus.OPEN, limit=limit).records)
    for status in (QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.RESUMED):
        records += list(ledger.page(status, limit=limit).records)
    records = sorted(records, key=lambda record: record.asked_at)[-limit:]
    inbox = f"{local.api_url}/inbox" if local.api_url else None
    return questions_page(records, inbox_url=inbox, title="Slack preview · agent-wait dev")
