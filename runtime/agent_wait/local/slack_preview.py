"""What `agent-wait dev` shows at `/dev/slack`: each question's Slack message as it would look, with no workspace.

Open questions first, then the latest decided ones, drawn with the blocks `SlackAnnounce` posts
(`agent_wait.channels.slack.announce.message_blocks`) by `agent_wait.channels.slack.preview_page`, as one static page.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = ("preview_questions",)


def preview_questions(local: Any, *, limit: int = 20) -> str:
    """The preview page of the questions on `local` (an `EmulatedStack`), at most `limit` of them."""
    from agent_wait.aws.ledger import DynamoDbLedger
    from agent_wait.channels.slack import PreviewMessage, preview_page
    from agent_wait.channels.slack.announce import message_blocks
    from agent_wait.contract.schema import QuestionStatus

    ledger = DynamoDbLedger(local.table, client=local.client("dynamodb"))
    records = list(ledger.page(QuestionStatus.OPEN, limit=limit).records)
    for status in (QuestionStatus.ANSWERED, QuestionStatus.EXPIRED, QuestionStatus.RESUMED):
        records += list(ledger.page(status, limit=limit).records)
    records = sorted(records, key=lambda record: record.asked_at)[-limit:]
    inbox = f"{local.api_url}/inbox" if local.api_url else None
    messages = []
    for record in records:
        link = f"{inbox}#/questions/{record.question_id}" if inbox else None
        blocks = message_blocks(record, inbox_url=link)
        asked = datetime.fromisoformat(record.asked_at.replace("Z", "+00:00")).timestamp()
        edited = record.status is not QuestionStatus.OPEN
        messages.append(PreviewMessage("questions", f"{asked:.6f}", blocks, record.question_id, edited=edited))
    return preview_page(messages, title="Slack preview · agent-wait dev")
