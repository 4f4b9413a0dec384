"""`agent-wait dev`'s memory: a stack started on a state folder carries on where the last one stopped.

The folder (`.agent-wait/` beside the project) holds two files:

- `dev.json`, who the stack is: its name (so resource names match), the answer API's port (so inbox tabs and
  printed links still reach it) and the local issuer's signing key (so tokens signed before a restart still pass
  the authorizer). Written as the stack starts; kept by `--fresh`.
- `state.json`, what the stack holds: every table's items, every queue's messages, the secrets' values, the
  schedules and the bucket objects (`agent_wait.local.snapshot`). Written as the stack stops, read after the next
  deploy; `--fresh` deletes it (`forget_state`).

Both are written whole (a temporary file, then `os.replace`), carry a format version, and a state file of another
format, or saved from a template whose tables, queues, buckets or secrets differ, is refused with `StateFileError`
(naming the file and `--fresh`) rather than half-loaded. What is not kept: an invocation in flight when the stack
stopped (its message is on the queue again, or was handled), and the local previews' pages (`/dev/teams`,
`/dev/webhooks`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import tempfile
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_wait.errors import EmulatorError

__all__ = ("FORMAT", "IDENTITY_FILE", "STATE_FILE", "DevState", "StateFileError", "forget_state")

logger = logging.getLogger("agent_wait.local")

FORMAT = 1
"""The version of both files' layout; a file of another is refused."""
STATE_FILE = "state.json"
IDENTITY_FILE = "dev.json"
_STATEFUL = (
    "AWS::DynamoDB::Table",
    "AWS::DynamoDB::GlobalTable",
    "AWS::SQS::Queue",
    "AWS::S3::Bucket",
    "AWS::SecretsManager::Secret",
    "AWS::Scheduler::ScheduleGroup",
)
"""The resource types whose contents the state file holds: a template that changes them changes what it means."""


class StateFileError(EmulatorError, ValueError):
    """A saved state file that cannot be loaded into this stack; the message names the file and `--fresh`."""


def forget_state(folder: str | os.PathLike[str]) -> bool:
    """Delete the saved state in `folder` (`agent-wait dev --fresh`); the port and the signing key stay.
    Whether there was any."""
    path = Path(folder) / STATE_FILE
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def template_fingerprint(template: Mapping[str, Any]) -> str:
    """A digest of what the state depends on: the stateful resources' logical ids, types and table keys (not the
    functions' code or settings, which change on every edit and do not change what a saved item means)."""
    shape = sorted(
        (logical, resource["Type"], json.dumps(resource.get("Properties", {}).get("KeySchema"), sort_keys=True))
        for logical, resource in template.get("Resources", {}).items()
        if resource.get("Type") in _STATEFUL
    )
    return hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]


def _write_atomically(path: Path, data: Mapping[str, Any]) -> None:
    """Write `data` as JSON to `path` whole or not at all (a temporary file beside it, then `os.replace`). The file
    is this user's only (`mkstemp` makes it so): it holds keys (the dev sign-in's, the link keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as file:
            json.dump(data, file)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _refuse(path: Path, why: str) -> StateFileError:
    return StateFileError(
        f"{path} {why}; start with `agent-wait dev --fresh` to begin empty (it deletes the saved state), "
        "or move the file away to keep it"
    )


def _read(path: Path) -> dict[str, Any] | None:
    """A state folder's file, checked for its format; None when there is none."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _refuse(path, f"is not a state file agent-wait dev can read ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise _refuse(path, "is not a state file agent-wait dev can read (not a JSON object)")
    if data.get("format") != FORMAT:
        raise _refuse(path, f"is of format {data.get('format')!r}, and this agent-wait reads format {FORMAT}")
    return data


def _port_is_free(port: int) -> bool:
    """Whether the API could listen on 127.0.0.1:`port` now (with the server's SO_REUSEADDR, so a port its last run
    left in TIME_WAIT counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class DevState:
    """A state folder opened for one run of a local stack (see the module docstring).

    Attributes:
        folder: the state folder.
        stack_name: the stack's name, the same on every run from this folder.
        saved_port: the port the API had last time (0: none yet).
        signing_key: the local issuer's key, as (key id, PEM), once a run saved it.
        snapshot: what the last run saved, to import after the deploy; None: start empty.
        port_note: set when the saved port was taken and the API listens elsewhere: what that means.
    """

    folder: Path
    stack_name: str
    fingerprint: str
    saved_port: int = 0
    signing_key: tuple[str, str] | None = None
    snapshot: dict[str, Any] | None = None
    saved_at: str | None = None
    port_note: str = ""
    restored: str = ""
    """What was restored, in a few words (empty when the stack started empty)."""
    _ready: bool = False

    @classmethod
    def open(cls, folder: str | os.PathLike[str], template: Mapping[str, Any]) -> DevState:
        """The state in `folder` for a stack of `template` (nothing is written yet).

        Raises:
            StateFileError: a file there is unreadable, of another format, or from another template's stack.
        """
        folder = Path(folder).resolve()
        identity = _read(folder / IDENTITY_FILE) or {}
        state = _read(folder / STATE_FILE)
        fingerprint = template_fingerprint(template)
        if state is not None and state.get("template") != fingerprint:
            raise _refuse(
                folder / STATE_FILE,
                "was saved from a stack whose tables, queues, buckets or secrets differ from this template's",
            )
        key = identity.get("issuer_key")
        return cls(
            folder=folder,
            stack_name=str(identity.get("stack_name") or f"agent-wait-dev-{uuid.uuid4().hex[:8]}"),
            fingerprint=fingerprint,
            saved_port=int(identity.get("api_port") or 0),
            signing_key=(str(key["id"]), str(key["pem"])) if isinstance(key, dict) else None,
            snapshot=state.get("resources") if state else None,
            saved_at=state.get("saved_at") if state else None,
        )

    @property
    def state_path(self) -> Path:
        return self.folder / STATE_FILE

    def describe(self) -> str:
        """Where the state lives and what was restored, for `agent-wait dev`'s banner (lines, each ending in a
        newline)."""
        restored = self.restored or "nothing saved yet: starting empty"
        lines = (
            f"  state        {self.folder}{os.sep}  ({restored}; saved again when dev stops; "
            "`agent-wait dev --fresh` starts empty)\n"
        )
        return lines + (f"  note         {self.port_note}\n" if self.port_note else "")

    def api_port(self, requested: int) -> int:
        """The port to serve the API on: `requested` when given, else last run's when it is free, else 0 (any),
        with `port_note` saying what that means for what was handed out before."""
        if requested or not self.saved_port:
            return requested
        if _port_is_free(self.saved_port):
            return self.saved_port
        self.port_note = (
            f"port {self.saved_port}, this folder's, is taken by another program, so the answer API moved: inbox tabs "
            "and links from before the restart will not reach it (free the port and restart to get it back)"
        )
        return 0

    @staticmethod
    def empty_emulator(endpoint_url: str) -> None:
        """Empty the process's emulator, so the deploy and the import start from nothing (moto keeps one state per
        process: a stack stopped earlier in it left its resources, under the same names)."""
        request = urllib.request.Request(f"{endpoint_url}/moto-api/reset", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=30):
            pass

    def restore(self, stack: Any) -> None:
        """Write the saved state into `stack`, deployed and not yet serving (its handlers start cold after)."""
        if self.snapshot is None:
            return
        from agent_wait.local.snapshot import import_snapshot

        report = import_snapshot(self.snapshot, stack.client, self.stack_name)
        for skipped in report.skipped:
            logger.info("state not restored: %s", skipped)
        written = ", ".join(f"{n} {kind}" for kind, n in report.written.items() if n)
        self.restored = f"restored {written or 'nothing'} saved {self.saved_at}"

    def started(self, stack: Any) -> None:
        """Record who the started `stack` is (its name, port and signing key), and allow `save` from now on."""
        issuer = stack.issuer
        self.signing_key = (issuer.key_id, issuer.private_key_pem())
        identity = {
            "format": FORMAT,
            "stack_name": self.stack_name,
            "api_port": urllib.parse.urlsplit(stack.api_url).port or 0,
            "issuer_key": {"id": self.signing_key[0], "pem": self.signing_key[1]},
        }
        _write_atomically(self.folder / IDENTITY_FILE, identity)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():  # the folder holds local secrets (the signing key, link keys): git leaves it out
            ignore.write_text("# written by agent-wait dev: its local state, secrets included\n*\n")
        self._ready = True

    def save(self, stack: Any) -> StateFileError | None:
        """Export what `stack` holds to the state file (as it stops: its queues are drained); the error when that
        failed, returned rather than raised so the stack stops whatever happens (the file saved before stays whole).
        Nothing is written for a stack that did not start, so a failed start never overwrites the state it could
        not load."""
        if not self._ready:
            return None
        from agent_wait.local.snapshot import export_snapshot

        self._ready = False
        try:
            resources = export_snapshot(stack.client, self.stack_name)
            saved_at = datetime.now(UTC).isoformat(timespec="seconds")
            state = {"format": FORMAT, "template": self.fingerprint, "saved_at": saved_at, "resources": resources}
            _write_atomically(self.state_path, state)
        except Exception as exc:
            logger.debug("saving the local state failed", exc_info=True)
            return StateFileError(
                f"could not save the local stack's state to {self.state_path} ({type(exc).__name__}: {exc}); "
                "what it held since the last save is lost"
            )
        return None
