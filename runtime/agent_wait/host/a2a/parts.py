"""What an A2A message holds, read as agent-wait reads it: a start's input, an answer to the open question."""

from __future__ import annotations

from typing import Any

from a2a.types.a2a_pb2 import Message
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from agent_wait.ledger import QuestionRecord

__all__ = ("answer_in", "data_of", "start_input")


def data_of(part: Any) -> Any:
    """A data part's value as JSON means it: protobuf keeps every number as a double, so a whole number (`900.0`) is
    given back as the integer it was sent as (`900`), as any JSON reader would read it."""
    return _whole(MessageToDict(part.data))


def _whole(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole(item) for item in value]
    return value


def answer_in(message: Message, question: QuestionRecord) -> Any:
    """The answer `message` gives `question`: its first data part that is an object, else its text when that is one
    of the question's allowed actions (`approve` → `{"action": "approve"}`); None when it gives none."""
    for part in message.parts:
        if part.HasField("data"):
            value = data_of(part)
            if isinstance(value, dict):
                return value
    text = " ".join(part.text for part in message.parts if part.text).strip()
    if text.lower() in question.envelope.allowed_actions:
        return {"action": text.lower()}
    return None


def start_input(message: Message) -> Any:
    """What a first message starts the agent with: its data part's value, else its text."""
    for part in message.parts:
        if part.HasField("data"):
            return data_of(part)
    text = "\n".join(part.text for part in message.parts if part.text)
    if not text:
        raise InvalidParamsError(
            message='the message has no input: send a data part with the agent\'s input, e.g. {"data": {"order_id": '
            '"o-1", "amount": 900}}, or a text part'
        )
    return text
