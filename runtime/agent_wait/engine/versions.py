"""The version guard: before every resume, the question's version stamp against the code running now.

`Router._resume` asks `VersionGuard.resume` first, for every resume (an answer, a hand-over, an operator's retry):

- no stamp (a question from before stamps, or an adapter that stamps none), or the same code: go on as usual;
- a migration registered with the adapter: it decides (`agent_wait.asking.versions.Migrated`), on every change;
- else the question's `on_new_version` (its policy, else the host's `AGENT_WAIT_ON_NEW_VERSION`, else
  `"resume"`): `"resume"` goes on while the change is compatible, `"fail"` never does.

What cannot go on raises `VersionChangedError`: the router fails the thread visibly (`version_changed`), and
`agent-wait retry THREAD` resumes it after a fix. Docs: docs/versions.md.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any

from agent_wait.asking.adapter import AgentAdapter, RunOutcome
from agent_wait.asking.versions import (
    Migrated,
    OnNewVersion,
    Version,
    VersionChange,
    VersionedAdapter,
    on_new_version_problem,
    stamped_version,
)
from agent_wait.asking.wait import unbind_answer
from agent_wait.engine.metrics import HostMetrics, Metric
from agent_wait.errors import ArgumentError, VersionChangedError
from agent_wait.ledger import QuestionRecord

__all__ = ("VersionGuard", "VersionOutcome", "on_new_version_setting")


class VersionOutcome(StrEnum):
    """What the guard did with a question asked under another version: the `reason` of `VersionChanges`."""

    RESUMED = "resumed"
    """The change was compatible and the policy allowed it: resumed as asked."""
    MIGRATED = "migrated"
    """The registered migration decided how the thread goes on."""
    FAILED = "failed"
    """Nothing allowed it to go on: the thread is failed `version_changed`."""


class VersionGuard:
    """Checks a question's version stamp before it resumes; runs the registered migration when there is one.

    Args:
        adapter: the router's adapter; guarded only when it stamps versions
            (`agent_wait.asking.versions.VersionedAdapter`).
        on_new_version: the host's choice for questions whose policy makes none (`AGENT_WAIT_ON_NEW_VERSION`).
        metrics: counts `VersionChanges` by what was done.
        log: a stdlib-compatible logger (ids and versions only).

    Raises:
        ArgumentError: `on_new_version` is not `"resume"` or `"fail"`.
    """

    def __init__(
        self,
        adapter: AgentAdapter,
        *,
        on_new_version: str = OnNewVersion.RESUME,
        metrics: HostMetrics,
        log: logging.Logger | Any,
    ) -> None:
        problem = on_new_version_problem(on_new_version)
        if problem is not None:
            raise ArgumentError(problem)
        self.adapter = adapter
        self.default = OnNewVersion(on_new_version)
        self.metrics = metrics
        self.log = log

    def resume(self, record: QuestionRecord, answer: Any) -> RunOutcome | None:
        """Guard one resume of `record` with `answer` (as the agent receives it).

        `answer` may be bound to the `@wait` call asked (`agent_wait.asking.wait.bind_answer`): a migration receives the
        answer alone, and a migration that resumes as asked resumes the bound value.

        Returns:
            None to resume as usual; the run's outcome when a migration ran it.

        Raises:
            VersionChangedError: the question may not resume under the code running now.
        """
        adapter = self.adapter
        stamped = stamped_version(record.envelope.source, record.envelope.question)
        if stamped is None or not isinstance(adapter, VersionedAdapter):
            return None
        deployed = adapter.deployed_version()
        if stamped.same_code(deployed):
            return None
        thread_id, question_id = record.thread_id, record.question_id
        compatibility = adapter.compatibility(thread_id, question_id, stamped)
        stamped = compatibility.asked or stamped
        if adapter.migration is not None:
            state = adapter.thread_state(thread_id)
            plain, _ = unbind_answer(answer)  # the answer itself, not the call a re-run node is bound to
            change = VersionChange(thread_id, question_id, stamped, deployed, compatibility.problems, state, plain)
            try:
                migrated = self._migrate(change)
            except VersionChangedError:
                self._count(VersionOutcome.FAILED, record, stamped, deployed)
                raise
            self._count(VersionOutcome.MIGRATED, record, stamped, deployed)
            if migrated is None:
                return None
            return adapter.resume_migrated(thread_id, question_id, answer, migrated)
        choice = self._choice(record)
        if choice is OnNewVersion.RESUME and compatibility.compatible:
            self._count(VersionOutcome.RESUMED, record, stamped, deployed)
            return None
        self._count(VersionOutcome.FAILED, record, stamped, deployed)
        why = (
            "; ".join(compatibility.problems)
            if compatibility.problems
            else f"its policy says on_new_version={choice.value!r}"
        )
        raise VersionChangedError(
            f"question {question_id} was asked under {stamped.describe()} and would resume under "
            f"{deployed.describe()}: {why}. Deploy the code it was asked under again, or register a migration "
            f"(docs/versions.md), then run: agent-wait retry {thread_id}",
            thread_id=thread_id,
            question_id=question_id,
            old=stamped,
            new=deployed,
        )

    def _choice(self, record: QuestionRecord) -> OnNewVersion:
        chosen = record.envelope.rules.get("on_new_version")
        return OnNewVersion(chosen) if on_new_version_problem(chosen) is None else self.default

    def _migrate(self, change: VersionChange) -> Migrated | None:
        migration = getattr(self.adapter, "migration", None)
        where = f"question {change.question_id} (asked under {change.old.describe()}, now {change.new.describe()})"
        try:
            migrated = migration(change) if migration is not None else None
        except Exception as exc:  # the migration's own failure, told apart from the agent's
            self.log.debug("migration failure detail: %s", exc, exc_info=exc)
            raise _failed(
                change,
                f"the migration raised {type(exc).__name__} for {where}; fix it, then run: "
                f"agent-wait retry {change.thread_id}",
            ) from exc
        if migrated is not None and not isinstance(migrated, Migrated):
            raise _failed(
                change,
                f"the migration returned a {type(migrated).__name__} for {where}; it must return "
                f"agent_wait.asking.versions.Migrated or None. Fix it, then run: agent-wait retry {change.thread_id}",
            )
        if change.problems and (migrated is None or migrated.goto is None):
            raise _failed(
                change,
                f"{where} cannot resume as asked ({'; '.join(change.problems)}), and the migration did not say where "
                f"the thread goes on: return Migrated(goto=..., update=...). Then run: agent-wait retry "
                f"{change.thread_id}",
            )
        return migrated

    def _count(self, outcome: VersionOutcome, record: QuestionRecord, old: Version, new: Version) -> None:
        self.metrics.count(Metric.VERSION_CHANGES, reason=outcome.value)
        self.log.warning(
            "question resumes under another version: %s",
            outcome.value,
            extra={
                "thread_id": record.thread_id,
                "question_id": record.question_id,
                "asked_under": old.to_dict(),
                "running": new.to_dict(),
            },
        )


def on_new_version_setting(text: str | None, problems: list[str], wrong: list[str]) -> str:
    """`AGENT_WAIT_ON_NEW_VERSION` as `HostSettings.from_env` reads it: `resume` when unset; a wrong value is added
    to `problems` (and its name to `wrong`), for the one `ConfigurationError` that names them all."""
    chosen = text or OnNewVersion.RESUME.value
    if (problem := on_new_version_problem(chosen)) is not None:
        problems.append(f"AGENT_WAIT_ON_NEW_VERSION: {problem}")
        wrong.append("AGENT_WAIT_ON_NEW_VERSION")
    return chosen


def _failed(change: VersionChange, message: str) -> VersionChangedError:
    """The visible failure of a migration for `change`, with its ids and both versions."""
    return VersionChangedError(
        message, thread_id=change.thread_id, question_id=change.question_id, old=change.old, new=change.new
    )
