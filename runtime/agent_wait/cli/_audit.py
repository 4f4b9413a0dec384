"""`agent-wait audit export` and `agent-wait audit grants`: the audit trail of a running stack, read from its ledger
through the status index, and the standing grants in force in the same window (one query of the grants)."""

from __future__ import annotations

import contextlib
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_wait.cli._target import CliError, Target

__all__ = ("export", "export_grants")


def export(target: Target, *, since: str, until: str | None, format: str, out: str | None) -> int:
    """Write every question asked or decided in [since, until) as JSON lines or CSV to `out` (a path; None:
    standard output); returns how many.

    Raises:
        CliError: a bad time, format or window (say which and how to fix it), or a ledger that cannot be read.
    """
    from agent_wait.cli._commands import ledger_for
    from agent_wait.engine.audit import AUDIT_FORMATS, audit_rows, audit_window, write_audit
    from agent_wait.errors import ArgumentError, LedgerError

    if format not in AUDIT_FORMATS:
        raise CliError(f"--format must be one of {', '.join(AUDIT_FORMATS)}; got {format!r}")
    try:
        window = audit_window(since, until, now=datetime.now(UTC))
    except ArgumentError as exc:
        raise CliError(f"--{exc.argument or 'since'}: {exc.message}") from None
    rows = audit_rows(ledger_for(target), window)
    try:
        with _opened(out) as stream:
            return write_audit(rows, stream, format=format)
    except LedgerError as exc:
        raise CliError(f"{exc.message}; is the stack running, and are these its outputs ({target.source})?") from None
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror}") from None


def export_grants(target: Target, *, since: str, until: str | None, format: str, out: str | None) -> int:
    """Write the standing grants in force in [since, until), each with the questions it decided, as JSON lines or CSV
    to `out` (a path; None: standard output); returns how many.

    Raises:
        CliError: as `export`.
    """
    from agent_wait.cli._commands import ledger_for
    from agent_wait.engine.audit import AUDIT_FORMATS, GRANT_COLUMNS, audit_grants, audit_window, write_audit
    from agent_wait.errors import ArgumentError, LedgerError

    if format not in AUDIT_FORMATS:
        raise CliError(f"--format must be one of {', '.join(AUDIT_FORMATS)}; got {format!r}")
    now = datetime.now(UTC)
    try:
        window = audit_window(since, until, now=now)
    except ArgumentError as exc:
        raise CliError(f"--{exc.argument or 'since'}: {exc.message}") from None
    try:
        found = audit_grants(ledger_for(target), window, now=now)
    except LedgerError as exc:
        raise CliError(f"{exc.message}; is the stack running, and are these its outputs ({target.source})?") from None
    if found.capped:
        print(
            f"agent-wait: only the newest {len(found.grants)} grants were read; older ones are left out",
            file=sys.stderr,
        )
    try:
        with _opened(out) as stream:
            return write_audit(found.grants, stream, format=format, columns=GRANT_COLUMNS)
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror}") from None


@contextlib.contextmanager
def _opened(out: str | None) -> Any:
    if out is None:
        yield sys.stdout
        return
    # newline="" as the csv module asks; JSON lines hold no bare carriage return.
    with Path(out).open("w", encoding="utf-8", newline="") as stream:
        yield stream
