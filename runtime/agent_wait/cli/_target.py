"""Where the CLI's commands go: the local stack `agent-wait dev` runs, or a deployed stack's outputs."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import urllib.parse
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.errors import WaitError

__all__ = (
    "LOCAL_STATE",
    "STATE_HOME_VARIABLE",
    "CliError",
    "Target",
    "answer_value",
    "find_local_state",
    "local_target",
    "resolve_target",
    "running_dev",
    "running_devs_folder",
)

LOCAL_REGION = "us-east-1"
"""The region of the local emulator's resources."""
LOCAL_KEY = "local"
"""What signs requests to the local emulator when no AWS credentials are configured (it checks none)."""
DEV_USER = "dev@example.com"
"""Who `agent-wait dev` signs in as, and credits a queue answer that names nobody to (the emulator has one IAM id)."""

LOCAL_STATE = Path(".agent-wait") / "local.json"
"""Written by `agent-wait dev` while it runs, in the folder it runs in, so other terminals can reach its emulator
(from that folder or any folder below it: `find_local_state`)."""
STATE_HOME_VARIABLE = "XDG_STATE_HOME"
"""Where this user's state lives (the XDG base directory); `running_devs_folder` keeps the running devs under it."""


class CliError(WaitError):
    """A one-line problem for the person at the terminal; the message says what to do."""


@dataclass(frozen=True)
class Target:
    """A stack the CLI talks to: its entry queue and ledger, and its answer API when one is known."""

    queue_url: str
    """The entry FIFO queue (starts, and answers when no API is known)."""
    table: str
    """The question table."""
    endpoint_url: str | None = None
    """The AWS endpoint (the local emulator's), or None for AWS itself."""
    region: str | None = None
    """The stack's region."""
    source: str = "environment"
    """Where this target came from, named in error messages."""
    api_url: str | None = None
    """The answer API's base URL; `agent-wait answer` goes there when set."""
    issuer: str | None = None
    """The local JWT issuer of `agent-wait dev` (its `/dev/token` signs in); None for a deployed stack."""
    dead_letter_url: str | None = None
    """The entry queue's dead-letter queue, for `agent-wait dead-letters`."""
    profile: str | None = None
    """The AWS CLI profile whose credentials sign requests (`--profile`); None: the default chain."""
    link_keys_arn: str | None = None
    """The secret of the keys that sign answer links on `agent-wait dev` (`agent-wait link` signs with them)."""
    folder: str | None = None
    """The folder `agent-wait dev` serves (where it was started, resolved); None for a deployed stack."""

    @classmethod
    def of_local_stack(cls, local: Any) -> Target:
        """The target `agent-wait dev` saves for its running `EmulatedStack`, serving the current folder: the
        emulator, the answer API and its dev sign-in, the dead-letter queue and the link keys."""
        return cls(
            folder=str(Path.cwd().resolve()),
            queue_url=local.queue_url,
            table=local.table,
            endpoint_url=local.endpoint_url,
            region=LOCAL_REGION,
            source="dev",
            api_url=local.api_url,
            issuer=local.issuer.url,
            dead_letter_url=local.environment.get("AGENT_WAIT_DLQ_URL"),
            link_keys_arn=local.environment.get("AGENT_WAIT_LINK_KEYS_ARN"),
        )

    def client(self, service: str) -> Any:
        """A boto3 client for this stack. On the local emulator no AWS credentials or region are needed: it
        checks no signature, so when none are configured the client signs with placeholder keys."""
        import boto3

        if not self.is_local:
            return _session(self.profile, self.region).client(service, endpoint_url=self.endpoint_url)
        session = _session(self.profile, self.region or LOCAL_REGION)
        if session.get_credentials() is None:
            session = boto3.Session(
                aws_access_key_id=LOCAL_KEY, aws_secret_access_key=LOCAL_KEY, region_name=self.region or LOCAL_REGION
            )
        return session.client(service, endpoint_url=self.endpoint_url)

    @property
    def is_local(self) -> bool:
        """Whether this is an emulator on this machine (the endpoint is a loopback address)."""
        host = urllib.parse.urlsplit(self.endpoint_url or "").hostname or ""
        return host == "localhost" or host.startswith("127.") or host == "::1"

    def save(self, path: Path = LOCAL_STATE) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2))

    def registered_at(self) -> Path:
        """This dev's file among the running devs: one per folder served, named by a hash of the folder."""
        digest = hashlib.sha256(str(self.folder).encode("utf-8")).hexdigest()[:16]
        return running_devs_folder() / f"{digest}.json"

    def register(self) -> None:
        """Add this running `agent-wait dev` to the user's running devs, so the CLI finds it from any folder
        (`running_dev`). Written whole (a temporary file, then renamed), so a reader never sees half of it."""
        path = self.registered_at()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(asdict(self), indent=2))
        os.replace(partial, path)

    def unregister(self) -> None:
        """Remove this dev from the running devs, unless another dev serving the same folder has replaced it."""
        path = self.registered_at()
        with contextlib.suppress(FileNotFoundError, json.JSONDecodeError):
            if json.loads(path.read_text()).get("endpoint_url") == self.endpoint_url:
                path.unlink(missing_ok=True)


def _session(profile: str | None, region: str | None) -> Any:
    import boto3
    import botocore.exceptions

    try:
        return boto3.Session(profile_name=profile, region_name=region)
    except botocore.exceptions.ProfileNotFound:
        raise CliError(f"no AWS profile {profile!r}; list yours with: aws configure list-profiles") from None


def _output(outputs: Mapping[str, Any], name: str) -> Any:
    """The output `name` whatever the construct's id: CDK names it `<construct id><name><8-hex hash>`."""
    pattern = re.compile(rf"{name}(?:[0-9A-F]{{8}})?$")
    return next((value for key, value in outputs.items() if pattern.search(key)), None)


def _outputs_target(outputs: Mapping[str, Any], source: str) -> Target | None:
    queue, table = _output(outputs, "EntryQueueUrl"), _output(outputs, "QuestionTableName")
    if not (queue and table):
        return None
    api = _output(outputs, "AnswerApiUrl")
    return Target(
        queue_url=queue,
        table=table,
        region=queue.split(".")[1] if "sqs." in queue else None,
        source=source,
        api_url=str(api).rstrip("/") if api else None,
        dead_letter_url=_output(outputs, "DeadLetterQueueUrl"),
    )


def _from_outputs(path: Path) -> Target:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise CliError(f"{path} does not exist; create it with: cdk deploy --outputs-file {path}") from None
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path} is not JSON ({exc.msg}); it should be the file `cdk deploy --outputs-file` wrote"
        ) from None
    stacks = [value for value in data.values() if isinstance(value, Mapping)] if isinstance(data, Mapping) else []
    for outputs in stacks:
        found = _outputs_target(outputs, str(path))
        if found is not None:
            return found
    raise CliError(
        f"{path} has no AgentWait outputs (EntryQueueUrl, QuestionTableName); is it from an AgentWait stack?"
    )


def _from_stack(name: str, *, region: str | None, profile: str | None, endpoint_url: str | None) -> Target:
    """The deployed stack `name`, found by its CloudFormation outputs."""
    probe = Target(queue_url="", table="", endpoint_url=endpoint_url, region=region, profile=profile)
    try:
        stacks = probe.client("cloudformation").describe_stacks(StackName=name)["Stacks"]
    except CliError:
        raise
    except Exception as exc:
        from agent_wait.aws.errors import error_code  # the CLI loads the AWS provider only when it talks to AWS

        code = error_code(exc)
        raise CliError(
            f"cannot read stack {name!r} ({code}); check its name, --region and your credentials (--profile)"
        ) from None
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])} if stacks else {}
    found = _outputs_target(outputs, f"stack {name}")
    if found is None:
        raise CliError(f"stack {name!r} has no AgentWait outputs (EntryQueueUrl, QuestionTableName)")
    return found


def resolve_target(
    outputs: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    stack: str | None = None,
    region: str | None = None,
    profile: str | None = None,
    endpoint_url: str | None = None,
) -> Target:
    """The stack to talk to, as the `aws` CLI would find it.

    `--stack NAME` (its CloudFormation outputs), else `--outputs FILE`, else `AGENT_WAIT_QUEUE_URL` +
    `AGENT_WAIT_TABLE`, else the running `agent-wait dev`; then `--region`, `--profile` and
    `--endpoint-url` apply to whichever was found.
    """
    env = os.environ if environ is None else environ
    if stack:
        found = _from_stack(stack, region=region, profile=profile, endpoint_url=endpoint_url)
    elif outputs:
        found = _from_outputs(Path(outputs))
    elif env.get(Settings.QUEUE_URL.value) and env.get(Settings.TABLE.value):
        found = Target(
            queue_url=env[Settings.QUEUE_URL.value],
            table=env[Settings.TABLE.value],
            endpoint_url=env.get("AWS_ENDPOINT_URL"),
            dead_letter_url=env.get(Settings.DLQ_URL.value),
        )
    elif find_local_state() is not None:
        found = local_target()
    else:
        found = running_dev() or _no_stack()
    return replace(
        found,
        region=region or found.region,
        profile=profile or found.profile,
        endpoint_url=endpoint_url or found.endpoint_url,
    )


def _no_stack() -> Target:
    raise CliError(
        "no stack to talk to: run `agent-wait dev` in another terminal, pass --stack NAME or --outputs "
        f"cdk-outputs.json (from `cdk deploy --outputs-file`), or set {Settings.QUEUE_URL.value} and "
        f"{Settings.TABLE.value}"
    )


def running_devs_folder() -> Path:
    """Where each running `agent-wait dev` registers itself for this user: `$XDG_STATE_HOME/agent-wait/dev`, by
    default `~/.local/state/agent-wait/dev`."""
    home = os.environ.get(STATE_HOME_VARIABLE) or str(Path.home() / ".local" / "state")
    return Path(home) / "agent-wait" / "dev"


def running_dev() -> Target | None:
    """The one `agent-wait dev` this user runs in some other folder, found in `running_devs_folder`; None when none
    runs. An entry whose emulator no longer answers (a dev that was killed) is forgotten on the way.

    Raises:
        CliError: several run, and none from here: which one is meant cannot be guessed.
    """
    running: list[Target] = []
    known = {f.name for f in fields(Target)}
    for path in sorted(running_devs_folder().glob("*.json")):
        try:
            state = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # removed, or being replaced, while we read: not ours to judge
        found = Target(**{k: v for k, v in state.items() if k in known})
        if found.endpoint_url and _listening(found.endpoint_url):
            running.append(replace(found, source=f"agent-wait dev serving {found.folder}"))
        else:
            path.unlink(missing_ok=True)
    if len(running) > 1:
        folders = " and ".join(sorted(str(found.folder) for found in running))
        raise CliError(
            f"several `agent-wait dev` are running, serving {folders}, and none from this folder or above it: "
            "run the command from the project folder of the one you mean"
        )
    return running[0] if running else None


def find_local_state(start: Path | None = None) -> Path | None:
    """The state file of an `agent-wait dev` running in `start` (default: the current folder) or a folder above
    it, the nearest first; None when there is none. So the CLI finds the project's dev from any of its folders."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / LOCAL_STATE
        if candidate.is_file():
            return candidate
    return None


def local_target(path: Path | None = None) -> Target:
    """The running `agent-wait dev`, from the state file it writes in the folder it runs in: `path`, else the one
    `find_local_state` finds from the current folder up, else the one this user runs elsewhere (`running_dev`).

    Raises:
        CliError: no `agent-wait dev` is running from this folder or any folder above it, nor elsewhere (or
            several are, elsewhere).
    """
    path = path or find_local_state()
    if path is None:
        elsewhere = running_dev()
        if elsewhere is not None:
            return elsewhere
        raise CliError(
            f"no `agent-wait dev` is running from this folder or any folder above it (no {LOCAL_STATE}), nor "
            "anywhere else; start it in another terminal, from the project folder"
        )
    shown = _shown(path)
    try:
        state = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        raise CliError(
            f"no `agent-wait dev` is running from this folder ({shown} is missing or unreadable); start it in "
            "another terminal, from the project folder"
        ) from None
    known = {f.name for f in fields(Target)}
    found = Target(**{**{k: v for k, v in state.items() if k in known}, "source": "agent-wait dev"})
    if found.endpoint_url and not _listening(found.endpoint_url):
        raise CliError(
            f"`agent-wait dev` is not running any more ({shown} is left from a run that ended, and nothing "
            f"answers at {found.endpoint_url}); start it again from {_folder(path.parent.parent)}, or delete {shown}"
        )
    return found


def _folder(path: Path) -> str:
    shown = _shown(path)
    return "this folder" if shown == "." else shown


def _shown(path: Path) -> str:
    """`path` as the person typed their way here: relative to the current folder."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def _listening(url: str) -> bool:
    """Whether something accepts connections at `url`'s host and port (the emulator of a running dev)."""
    parts = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=1):
            return True
    except OSError:
        return False


def answer_value(action: str | None, note: str | None, args: Any, value: Any) -> Any:
    """The answer the CLI sends: `value` as given, else `{"action", "note"?, "args"?}`."""
    if value is not None:
        return value
    built: dict[str, Any] = {"action": action}
    if note:
        built["note"] = note
    if args is not None:
        built["args"] = args
    return built
