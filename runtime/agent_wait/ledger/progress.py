"""Where an open question's follow-ups stand on its row: reminders sent, escalation steps in effect, votes cast
(`Progress`, each change a compare-and-set on its `version`), and the follow-up the sweep has claimed but not yet
announced (`Notice`). Every name imports from `agent_wait.ledger` (and `agent_wait.ledger.records`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agent_wait.errors import ArgumentError
from agent_wait.people.keys import person_keys

__all__ = ("PROGRESS_ATTRIBUTES", "Notice", "Progress", "Vote", "check_advance")


class Notice(StrEnum):
    """A follow-up the sweep has claimed on a question but not yet announced (it announces it until one succeeds)."""

    REMINDER = "reminder"
    ESCALATED = "escalated"


@dataclass(frozen=True, slots=True)
class Vote:
    """One answerer's vote on a quorum question."""

    voter: str
    """Tells answerers apart: the person's key (`Answerer.identity`; rows written before the one person key hold an
    API user's `iss#sub` here)."""
    by: str | None
    """Who voted, as recorded (`answered_by`)."""
    answer: Any
    """The vote as given (`{"action": ...}`)."""
    answer_id: str
    """The message's identity; a redelivered vote has the same one."""
    at: str
    """RFC 3339 time the vote was recorded."""
    via: str | None = None
    sender: str | None = None
    subject: str | None = None
    """The voter's own proven subject (`iss#sub`, `slack:T:U`), when their door proves one."""

    @property
    def keys(self) -> frozenset[str]:
        """Every name this vote is known by: the voter's key, who it is recorded as, their proven subject."""
        return person_keys((self.voter, self.by, self.subject))

    @property
    def action(self) -> str | None:
        action = self.answer.get("action") if isinstance(self.answer, Mapping) else None
        return action if isinstance(action, str) else None

    def summary(self) -> dict[str, Any]:
        """What an envelope and the agent see: who, when, and their answer's fields (`action` first)."""
        answer = dict(self.answer) if isinstance(self.answer, Mapping) else {"answer": self.answer}
        return {"action": answer.pop("action", None), **answer, "by": self.by, "at": self.at}

    def to_item(self) -> dict[str, Any]:
        item = {
            "voter": self.voter,
            "by": self.by,
            "answer": self.answer,
            "answer_id": self.answer_id,
            "at": self.at,
            "via": self.via,
            "sender": self.sender,
        }
        if self.subject is not None:
            item["subject"] = self.subject
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Vote:
        return cls(
            voter=str(item["voter"]),
            by=item.get("by"),
            answer=item.get("answer"),
            answer_id=str(item["answer_id"]),
            at=str(item["at"]),
            via=item.get("via"),
            sender=item.get("sender"),
            subject=item.get("subject"),
        )


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an open question's follow-ups stand: reminders sent, escalation steps in effect, votes cast.

    `version` grows by one with every change, so each change is a compare-and-set (`Ledger.advance`): the
    sweep and an answer racing on one question never both win, and a decided question never changes.
    """

    reminders: int = 0
    """Reminders claimed so far (announced, or `notice` while the announcement is pending)."""
    escalations: int = 0
    """Escalation steps in effect."""
    notice: Notice | None = None
    """A claimed reminder or escalation whose announcement has not succeeded yet."""
    votes: tuple[Vote, ...] = ()
    """Votes cast on a quorum question, in order."""
    version: int = 0

    def to_item(self) -> dict[str, Any]:
        """Row attributes (flat: `progress` is an envelope field name)."""
        return {
            "reminders_sent": self.reminders,
            "escalations": self.escalations,
            "notice": self.notice.value if self.notice else None,
            "votes": [vote.to_item() for vote in self.votes],
            "version": self.version,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Progress:
        notice = item.get("notice")
        return cls(
            reminders=int(item.get("reminders_sent") or 0),
            escalations=int(item.get("escalations") or 0),
            notice=Notice(notice) if notice else None,
            votes=tuple(Vote.from_item(vote) for vote in item.get("votes") or ()),
            version=int(item.get("version") or 0),
        )

    def voted(self, *names: str | None) -> Vote | None:
        """The vote cast by the person any of `names` names (their key, their proven subject), or None. One person
        is one vote however they answer: their sign-in, a link made for their address, Slack, compared by key
        (`agent_wait.people.keys`), so case, whitespace and an `email:` prefix never make a second person."""
        wanted = person_keys(names)
        return next((vote for vote in self.votes if vote.keys & wanted), None)

    def vote_with(self, answer_id: str) -> Vote | None:
        """The vote that message `answer_id` cast, or None (a redelivery or a hand-over finds its own vote)."""
        return next((vote for vote in self.votes if vote.answer_id == answer_id), None)


def check_advance(progress: Progress, expected_version: int) -> None:
    """Refuse an `advance` whose new version does not follow the expected one (a caller's bug, not a race)."""
    if progress.version != expected_version + 1:
        raise ArgumentError(
            f"advance writes version {progress.version} over expected version {expected_version}; "
            "the new progress must be version expected_version + 1",
            argument="progress",
        )


PROGRESS_ATTRIBUTES = ("reminders_sent", "escalations", "notice", "votes", "version")
"""The row attributes `Progress` is stored in."""
