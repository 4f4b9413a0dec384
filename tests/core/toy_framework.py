"""A toy fourth framework (a step pauses by raising, and runs again from its top with the answer) and its
whole agent-wait binding, `ToyBinding` and two thin functions: a new framework is one `WaitBinding`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.asking.flow import WaitBinding, publish_questions, require_thread_id, wait_decorator
from agent_wait.asking.wait import unpack_question
from agent_wait.contract.publish import Announcers, PublishReport

NO_ANSWER = object()


class PausedError(Exception):
    """Raised by a step to pause its run on `args[0]`."""


@dataclass
class Run:
    """The toy framework's per-call context: the thread, and the answer a resumed run carries."""

    thread_id: str
    answer: Any = NO_ANSWER

    def pause(self, value: Any) -> Any:
        if self.answer is NO_ANSWER:
            raise PausedError(value)
        return self.answer


@dataclass
class Result:
    """What `invoke` returns: the step's output, or what it paused on and under which question id."""

    output: Any = None
    paused_on: Any = None
    question_id: str = ""


def invoke(step: Callable[..., Any], *args: Any, thread_id: str, answer: Any = NO_ANSWER, **kwargs: Any) -> Result:
    """Run `step` (fresh, or resumed with `answer`); a pause ends the run with what it waits on."""
    try:
        return Result(output=step(*args, run=Run(thread_id, answer), **kwargs))
    except PausedError as paused:
        return Result(paused_on=paused.args[0], question_id=f"{thread_id}.{step.__name__}")


class ToyBinding(WaitBinding[Run]):
    """`@wait` on the toy framework: the `run` parameter is injected, and parking is `run.pause`."""

    def is_injected(self, parameter: inspect.Parameter) -> bool:
        return parameter.name == "run"

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Run, tuple[Any, ...], dict[str, Any]]:
        return kwargs["run"], args, kwargs

    def thread_id(self, context: Run) -> str:
        return context.thread_id

    def park(self, context: Run, question: dict[str, Any]) -> Any:
        return context.pause(question)


wait = wait_decorator(lambda fn, decision: ToyBinding(), module=__name__, doc="Make a toy step wait.", mode_doc="")


def publish_interrupts(
    result: Result, thread_id: str, announce: Announcers, *, reply_to: Any = None, now: datetime | None = None
) -> list[PublishReport]:
    """Publish what a run paused on (as each binding's `publish_interrupts`); nothing when it finished."""
    parked = [] if result.paused_on is None else [(result.paused_on, result.question_id)]
    questions = [unpack_question(value, require_thread_id(thread_id), qid) for value, qid in parked]
    return publish_questions(questions, announce, reply_to=reply_to, now=now)
