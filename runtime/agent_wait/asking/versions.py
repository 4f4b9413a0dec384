"""Which code a question was asked under, and what a resume under other code may do (docs/versions.md).

A question may wait days; the agent may be redeployed meanwhile. LangGraph applies the latest graph to every
paused thread, so a resume can land in a node or a `@wait` function that no longer exists, or takes other
parameters, and LangGraph then does nothing at all, silently. agent-wait stamps each question with the
version of the code that asked it (`Version`, kept in the envelope's `source["version"]`) and, before every
resume, compares it with the code running now (`engine/versions.py::VersionGuard`):

- same code: resume;
- other code, policy `"resume"` (the default): resume only when still compatible (the waiting node and the
  `@wait` function exist, with the same parameters); else fail the thread visibly, `version_changed`;
- other code, policy `"fail"`: fail the thread visibly, `version_changed`;
- a migration registered with the adapter (a `Migration`; a policy in the envelope is JSON, so the callable
  lives with the code) decides on every change instead: it receives the old and new versions and the state.

A failed thread resumes with `agent-wait retry` after a fix: a deploy that restores the code, or a migration.
Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol, runtime_checkable

from agent_wait.policy.new_version import OnNewVersion, checked_on_new_version, on_new_version_problem

__all__ = (
    "VERSION_KEY",
    "Compatibility",
    "Migrated",
    "Migration",
    "OnNewVersion",
    "ToolVersioning",
    "Version",
    "VersionChange",
    "VersionedAdapter",
    "asked_function",
    "checked_on_new_version",
    "fingerprint",
    "function_problems",
    "on_new_version_problem",
    "parameters_fingerprint",
    "schema_fingerprint",
    "stamped_version",
    "with_version",
)

VERSION_KEY = "version"
"""The key of the version stamp in an envelope's `source`."""


@dataclass(frozen=True, slots=True)
class Version:
    """The version of the code a question was asked under, or of the code running now.

    Stamped on a question as one short text (`to_text`), so the question's ledger row stays under 1 KB (one write
    unit): `"<graph>:<signature>"`, plus `":<user>"` when the user set a version. The node and the function are
    not in it: the function is the question's own, the node is read from the thread's state.

    Example:
        >>> stamp = Version(graph="P8xk2Q", signature="a-9Zt0", user="2026-12-04")
        >>> stamp.to_text()
        'P8xk2Q:a-9Zt0:2026-12-04'
        >>> Version.from_text(stamp.to_text()) == stamp
        True
    """

    graph: str | None = None
    """A stable hash of the graph's structure (node names, edges, branches); the agent's tools for Pydantic AI and
    Strands. None when the adapter cannot tell."""
    user: str | None = None
    """The version the user set (`LangGraphAdapter(graph, version=...)`); None when unset."""
    node: str | None = None
    """The node the question waits in (LangGraph); None when unknown or not a graph."""
    function: str | None = None
    """The `@wait` function (or tool) the question waits on; not in the text: read from the question itself."""
    signature: str | None = None
    """A stable hash of that function's parameters (names, kinds, annotations); None when it was not found."""

    def to_text(self) -> str:
        """The stamp as kept in `source["version"]`: `graph:signature`, then `:user` when set."""
        text = f"{self.graph or ''}:{self.signature or ''}"
        return text if self.user is None else f"{text}:{self.user}"

    @classmethod
    def from_text(cls, text: Any, *, function: str | None = None, node: str | None = None) -> Version | None:
        """Read a stamp `to_text` wrote; None for anything else (a question from before stamps, a foreign value)."""
        if not isinstance(text, str) or ":" not in text:
            return None
        parts = text.split(":", 2)
        user = parts[2] if len(parts) == 3 else None
        return cls(graph=parts[0] or None, user=user, node=node, function=function, signature=parts[1] or None)

    def to_dict(self) -> dict[str, str]:
        """Every part that is set, by name (for logs)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def same_code(self, other: Version) -> bool:
        """True when both are the same graph (or tools) and the same user-set version."""
        return self.graph == other.graph and self.user == other.user

    def describe(self) -> str:
        """A short human form: `graph 3f2a9c1b, version 2026-12-04`."""
        parts = [f"graph {self.graph[:8]}" if self.graph else "graph unknown"]
        if self.user is not None:
            parts.append(f"version {self.user}")
        return ", ".join(parts)


def stamped_version(source: Any, question: Any = None) -> Version | None:
    """The version stamp in an envelope's `source`, with the function the question waits on (its `source`'s, else
    its value's `function`); None when it has none."""
    if not isinstance(source, Mapping):
        return None
    return Version.from_text(source.get(VERSION_KEY), function=_function_in(source, question))


def with_version(source: Mapping[str, Any] | None, version: Version) -> dict[str, Any]:
    """`source` with `version` stamped in (a new dict; `source` may be None, a bare question's)."""
    return {**(dict(source) if source else {}), VERSION_KEY: version.to_text()}


def _function_in(*holders: Any) -> str | None:
    for holder in holders:
        name = holder.get("function") if isinstance(holder, Mapping) else None
        if isinstance(name, str):
            return name
    return None


def fingerprint(document: Any) -> str:
    """A stable 6-character hash of a JSON document (keys sorted; URL-safe base64, never `:`): the same structure
    always hashes the same.

    36 bits: a change goes unnoticed about once in 69 billion deploys. Short on purpose: it rides in every
    question's row, and the refund example's row must stay under 1 KB (tests/aws/test_ledger_rows.py)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")[:6]


def parameters_fingerprint(signature: inspect.Signature, names: Iterable[str]) -> str:
    """The hash of the parameters `names` of `signature`: each one's name, kind and annotation (as text).

    A default changed is still the same parameter; a parameter added, removed, renamed, reordered, made
    keyword-only or annotated differently is not.
    """
    params = signature.parameters
    described = [
        [name, params[name].kind.name, _annotation_text(params[name].annotation)] for name in names if name in params
    ]
    return fingerprint(described)


def _annotation_text(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return annotation
    return inspect.formatannotation(annotation)


def function_problems(stamped: Version, current: Version, *, kind: str = "@wait function") -> tuple[str, ...]:
    """What keeps a `@wait` function (or a tool, `kind="tool"`) from taking its answer under the current code: gone,
    or other parameters."""
    if stamped.function is None or stamped.signature is None:
        return ()
    if current.signature is None:
        return (f"the {kind} {stamped.function}() is not in the code running now",)
    if current.signature != stamped.signature:
        return (f"the {kind} {stamped.function}() takes other parameters than when it asked",)
    return ()


def schema_fingerprint(schema: Any) -> str:
    """The hash of a tool's parameters JSON Schema, its `description`s and `title`s left out (a docstring edit is
    the same tool)."""
    return fingerprint(_without_prose(schema))


def _without_prose(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_prose(item) for key, item in value.items() if key not in ("description", "title")}
    if isinstance(value, list):
        return [_without_prose(item) for item in value]
    return value


def asked_function(question: Any) -> str | None:
    """The function or tool a question waits on: its `source["function"]` (`@wait`), else its value's `function`
    (a Pydantic AI call that needs approval); None for a bare question."""
    return _function_in(getattr(question, "source", None), getattr(question, "value", None))


class ToolVersioning:
    """The version guard for an adapter whose questions wait on tool calls (Pydantic AI, Strands): the version is
    the agent's tools (names and parameter schemas) and the user's; a question stays compatible while its tool
    exists with the same parameters. Migrations are not supported for tools: `migration` is always None.

    A subclass sets `version` and implements `tool_schemas()`.
    """

    version: str | None = None
    migration: Migration | None = None
    _signatures: dict[str, str] | None = None

    def tool_schemas(self) -> Mapping[str, Any]:
        """Each tool the agent running now offers, by name, with its parameters JSON Schema."""
        raise NotImplementedError

    def tool_signatures(self) -> dict[str, str]:
        """Each tool's parameters hash, by name (computed once)."""
        if self._signatures is None:
            self._signatures = {str(name): schema_fingerprint(schema) for name, schema in self.tool_schemas().items()}
        return self._signatures

    def deployed_version(self) -> Version:
        """The agent running now: its tools' hash and the user-set version."""
        return Version(graph=fingerprint(sorted(self.tool_signatures().items())), user=self.version)

    def stamp(self, question: Any) -> Any:
        """`question` (an `agent_wait.contract.envelope.Question`) with the version stamp in its `source`."""
        function = asked_function(question)
        signature = self.tool_signatures().get(function) if function is not None else None
        stamp = Version(self.deployed_version().graph, self.version, None, function, signature)
        return replace(question, source=with_version(question.source, stamp))

    def compatibility(self, thread_id: str, question_id: str, stamped: Version) -> Compatibility:
        """Compatible while the tool the question waits on exists with the same parameters."""
        signature = self.tool_signatures().get(stamped.function) if stamped.function is not None else None
        deployed = self.deployed_version()
        current = Version(deployed.graph, deployed.user, None, stamped.function, signature)
        return Compatibility(current, function_problems(stamped, current, kind="tool"))

    def thread_state(self, thread_id: str) -> Any:
        return None

    def resume_migrated(self, thread_id: str, question_id: str, answer: Any, migrated: Migrated) -> Any:
        raise NotImplementedError("migrations are for LangGraph graphs; a tool-calling agent registers none")


@dataclass(frozen=True, slots=True)
class Compatibility:
    """How the code running now stands to a question asked under `stamped`."""

    current: Version
    """The code running now, for this question: its node and function as they are now (None where gone)."""
    problems: tuple[str, ...] = ()
    """Why the question cannot resume as it was asked (ids and names only); empty when it can."""
    asked: Version | None = None
    """The stamp, completed from the thread's state (the node it waits in); None: the stamp as it is."""

    @property
    def compatible(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class VersionChange:
    """What a migration receives: the question, the versions before and now, the thread's state and the answer."""

    thread_id: str
    question_id: str
    old: Version
    """The version the question was asked under."""
    new: Version
    """The version running now."""
    problems: tuple[str, ...]
    """Why it cannot resume as asked; empty when the change is compatible."""
    state: Any = field(repr=False)
    """The thread's state as the framework keeps it (a LangGraph state's values). Not in the repr: it may hold
    personal data."""
    answer: Any = field(repr=False)
    """The decided answer, in the form the agent receives it. Not in the repr."""

    @property
    def compatible(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class Migrated:
    """What a migration asks for. Both unset: resume the answer as it was asked (only while compatible).

    Example:
        >>> Migrated(update={"approved": True}, goto="refund")
        Migrated(update={'approved': True}, goto='refund')
    """

    update: Mapping[str, Any] | None = None
    """State updates applied before the thread goes on (LangGraph: `Command(update=...)`)."""
    goto: str | None = None
    """Where the thread goes on instead of the waiting node (LangGraph: `Command(goto=...)`); the answer is then
    not resumed into the old node: put what the new code needs of it in `update`. Required when the waiting node
    is gone."""


Migration = Callable[[VersionChange], "Migrated | None"]
"""A function the user registers with the adapter (`LangGraphAdapter(graph, migration=...)`): called on every
resume of a question asked under another version; returns `Migrated`, or None to resume as asked."""


@runtime_checkable
class VersionedAdapter(Protocol):
    """What an `AgentAdapter` adds to stamp its questions and have them guarded on resume (optional: an adapter
    without it is never guarded, and its questions carry no stamp)."""

    migration: Migration | None
    """The registered migration, or None."""

    def deployed_version(self) -> Version:
        """The code running now (graph or tools, user-set version); cheap, no store read."""
        ...

    def compatibility(self, thread_id: str, question_id: str, stamped: Version) -> Compatibility:
        """How the code running now stands to the question `question_id`, asked under `stamped`."""
        ...

    def thread_state(self, thread_id: str) -> Any:
        """The thread's state, as a migration receives it."""
        ...

    def resume_migrated(self, thread_id: str, question_id: str, answer: Any, migrated: Migrated) -> Any:
        """Resume as `migrated` says (returns the adapter's `RunOutcome`)."""
        ...
