"""What an approval of a `@wait` question runs with, and the call a host resumes it bound to.

An answer travels to the agent bound to the call it approves (`bind_answer`), so a re-run that computed other
arguments cannot run the body with them; the approved arguments (`approved_args`) are the ledger's record of
what ran. The asking side (`agent_wait.asking.wait`) re-exports every name. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ("APPROVE", "BOUND_CALL", "approved_args", "bind_answer", "unbind_answer", "wait_call")

APPROVE = "approve"
"""The action that runs a `@wait` function's body."""

BOUND_CALL = "__agent_wait_call__"
"""Key under which a host resumes a `@wait` question with the call that was asked, beside the answer.

`{"__agent_wait_call__": {"function": name, "args": {...}}, "answer": ...}`: the `@wait` call unwraps it on
resume (`unbind_answer`) and runs its body only when its re-run computed exactly the arguments asked; the
answer's edits (when allowed) then apply on top, so the body runs with the approved arguments and no others.
"""


def wait_call(question: Any, source: Any) -> tuple[str, Mapping[str, Any]] | None:
    """The function name and published arguments of a `@wait` question, or None for any other question."""
    if not isinstance(question, Mapping) or not isinstance(source, Mapping):
        return None
    function, args = question.get("function"), question.get("args")
    if not isinstance(function, str) or source.get("function") != function or not isinstance(args, Mapping):
        return None
    return function, args


def approved_args(question: Any, source: Any, answer: Any) -> dict[str, Any] | None:
    """The arguments an approval of a `@wait` question runs its body with: as asked, or as edited; else None.

    None for any other question, and for an answer that does not approve (the body does not run).
    """
    call = wait_call(question, source)
    if call is None or not isinstance(answer, Mapping) or answer.get("action") != APPROVE:
        return None
    edits = answer.get("args")
    return {**call[1], **(edits if isinstance(edits, Mapping) else {})}


def bind_answer(question: Any, source: Any, answer: Any) -> Any:
    """The value a host resumes a `@wait` question with: `answer` bound to the call asked (`BOUND_CALL`).

    Any other question's answer is returned unchanged.
    """
    call = wait_call(question, source)
    if call is None:
        return answer
    return {BOUND_CALL: {"function": call[0], "args": dict(call[1])}, "answer": answer}


def unbind_answer(value: Any) -> tuple[Any, Mapping[str, Any] | None]:
    """The answer inside a value `bind_answer` made, and the call it is bound to; `(value, None)` for a value that is
    not bound (an answer resumed in-process, bare)."""
    if not isinstance(value, Mapping) or not isinstance(value.get(BOUND_CALL), Mapping):
        return value, None
    return value.get("answer"), value[BOUND_CALL]
