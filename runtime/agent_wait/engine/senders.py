"""Who sent a queue message, proven by the transport, and what that sender may claim or do.

SQS stamps every message with `SenderId`, the IAM identity that sent it (`AROA...:session` for a role,
`AIDA...` for a user). Whoever can write to the entry queue could otherwise approve any question as
anyone: so only trusted senders (the answer API, the sweep) may claim `answered_by`, `via`, groups or a
deadline; any other sender is recorded as itself, its claim kept apart for audit, and a deadline claim
from it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_wait.contract.messages import AnswerMessage
from agent_wait.engine.checks import Answerer, answerer_for, principal_of

__all__ = ("SenderPolicy",)


@dataclass(frozen=True, slots=True)
class SenderPolicy:
    """Which queue senders are trusted, and which may send starts and answers.

    Each is a set of IAM unique ids (the part of `SenderId` before any `:`); None means no restriction.
    A message with no sender (a host that is not SQS) is the host's own and trusted.

    Example:
        >>> policy = SenderPolicy(trusted=frozenset({"AROAAPI"}), answer_senders=frozenset({"AROAOPS"}))
        >>> policy.trusts("AROAAPI:api-function"), policy.trusts("AROAOPS:alice")
        (True, False)
    """

    trusted: frozenset[str] | None = None
    """May claim `answered_by`, `via`, groups and `origin: deadline` (None: everyone, as before)."""
    start_senders: frozenset[str] | None = None
    """May send starts besides the trusted ones (None: any sender the queue lets in)."""
    answer_senders: frozenset[str] | None = None
    """May send answers and retries besides the trusted ones (None: any sender the queue lets in)."""

    def trusts(self, sender: str | None) -> bool:
        return sender is None or self.trusted is None or principal_of(sender) in self.trusted

    def may_start(self, sender: str | None) -> bool:
        return self.trusts(sender) or self.start_senders is None or principal_of(sender) in self.start_senders

    def may_answer(self, sender: str | None) -> bool:
        return self.trusts(sender) or self.answer_senders is None or principal_of(sender) in self.answer_senders

    def answerer(self, message: AnswerMessage, sender: str | None) -> Answerer:
        """Who answers: the claim when the sender is trusted, else the sender itself (the claim kept for audit)."""
        principal = principal_of(sender)
        if self.trusts(sender):
            default_via = "deadline" if message.from_deadline else "queue"
            return answerer_for(
                message.via or default_via,
                person=message.answered_by or sender,  # a trusted sender names the person; its key is kept
                sender=sender,
                groups=message.groups,
                principal=principal,
            )
        return answerer_for(
            "queue",
            person=f"sqs:{principal}",
            sender=sender,
            principal=principal,
            claimed_by=message.answered_by,
            vouched=False,
        )
