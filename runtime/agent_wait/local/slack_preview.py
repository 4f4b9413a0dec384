"""What `agent-wait dev` shows at `/dev/slack`: each question's Slack message as it would look, with no workspace.

The open questions first, then the latest decided ones, read from the stack's question table here and drawn by the
Slack channel (`agent_wait.channels.slack.preview.questions_page`) as one static page. No workspace takes a click
here, so an open question's buttons are its signed answer links (signed with the stack's link keys, as `agent-wait
link` signs them), answering through the link page as the Teams preview's buttons do.
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
    links = _answer_links(local, [r for r in records if r.status is QuestionStatus.OPEN])
    return questions_page(records, inbox_url=inbox, links=links, title="Slack preview · agent-wait dev")


def _answer_links(local: Any, records: list[Any]) -> dict[str, dict[str, str]]:
    """The signed answer links of each open question in `records`, by question id and action; none for a question
    that can have none (its policy names who may answer, it needs a quorum, or its deadline passed)."""
    from agent_wait.contract.schema import Settings
    from agent_wait.host.links import LinkKeys, answer_links

    arn = local.environment.get(Settings.LINK_KEYS_ARN.value)
    if not (arn and local.api_url and records):
        return {}
    keys = LinkKeys.load(arn, client=local.client("secretsmanager"))
    now = local.clock()
    return {record.question_id: answer_links(keys, local.api_url, record.envelope, now=now) for record in records}
