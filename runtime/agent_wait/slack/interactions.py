"""`SlackInteractions`: the button clicks and modal submissions Slack sends, decided through the one decision path.

Slack POSTs each interaction to the answer API's `POST /slack/interactions` as a form field `payload` (JSON),
signed with the app's signing secret. This module:

1. refuses a request whose `X-Slack-Signature` (v0: HMAC-SHA256 of `v0:<timestamp>:<body>`) does not verify, or
   whose `X-Slack-Request-Timestamp` is more than 5 minutes from now (a replay), with 401 and nothing decided;
2. names the person: the Slack user (`slack:<team>:<user>`, how a quorum tells people apart), shown by the email
   Slack gives for them (`users.info`, scope `users:read.email`), and a member of each answerer group whose
   Slack user group (`SlackRouting.mentions`) lists them (`usergroups.users.list`);
3. decides through `AnswerService` (the desk's rules: actions, answerers, edits, schema, quorum; the thread held;
   the router handed the decision), exactly as the inbox, the API and signed links do;
4. tells the person what happened, privately (an ephemeral reply through the interaction's `response_url`): done,
   already decided by someone (who, how), a vote recorded, or refused and why. A modal that is refused keeps its
   values and shows why on its form.

The answer id is derived from the user, the question, the button and Slack's `action_ts`, so a payload Slack (or
anyone) sends again repeats its outcome and never decides twice. The message itself is redrawn by `SlackAnnounce`
when the router announces the decision, for every door.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.signature import SignatureVerifier

from agent_wait._time import utc_now
from agent_wait.engine.answering import VerdictKind
from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.errors import ArgumentError
from agent_wait.people import address_key
from agent_wait.slack import _blocks
from agent_wait.slack.announce import SlackRouting

__all__ = ("MAX_SKEW_SECONDS", "SlackInteractions", "SlackReply")

logger = logging.getLogger("agent_wait.slack")

MAX_SKEW_SECONDS = 300
"""How far a request's timestamp may be from now: Slack's own advice, 5 minutes."""
_GROUPS_TTL = 60.0
"""How long a Slack user group's members are remembered (per process)."""

_REFUSED = {
    RefusalReason.ANSWERER_NOT_ALLOWED: "you are not one of the people who may answer this question",
    RefusalReason.ACTION_NOT_ALLOWED: "this question does not take that answer",
    RefusalReason.EDIT_NOT_ALLOWED: "this question does not take edited arguments",
    RefusalReason.THREAD_BUSY: "the agent is working on this thread right now; try again in a few seconds",
    RefusalReason.THREAD_FAILED: "the agent failed on this thread; an operator must retry it first",
    RefusalReason.NOT_PARKED: "the agent is no longer waiting on this question",
    RefusalReason.UNKNOWN_QUESTION: "there is no such question any more",
}


@dataclass(frozen=True, slots=True)
class SlackReply:
    """The HTTP response Slack gets: a status and a JSON body (None: empty)."""

    status: int
    body: dict[str, Any] | None = None


class _Clock:
    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now().timestamp()


class SlackInteractions:
    """Verify, decide and reply to Slack's interaction requests.

    Args:
        signing_secret: the Slack app's signing secret.
        service: the answer service (`AnswerService`) every door decides through.
        find: reads a question's row by id (`ledger.find`).
        client: a `slack_sdk.WebClient` with the bot token (`users.info`, `usergroups.users.list`, `views.open`).
        routing: the Slack user group of each answerer group (`mentions`).
        clock: returns now (UTC).
        respond: sends a reply to an interaction's `response_url` (JSON POST); the standard library by default.
    """

    def __init__(
        self,
        *,
        signing_secret: str,
        service: Any,
        find: Callable[[str], Any],
        client: Any,
        routing: SlackRouting,
        clock: Callable[[], datetime] = utc_now,
        respond: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.verifier = SignatureVerifier(signing_secret, clock=_Clock(clock))  # type: ignore[arg-type]
        self.service = service
        self.find = find
        self.client = client
        self.routing = routing
        self.clock = clock
        self.respond = respond or _post_json
        self._members: dict[str, tuple[float, frozenset[str]]] = {}

    # -- the request --------------------------------------------------------------------------------------------

    def handle(self, body: str, headers: Mapping[str, str]) -> SlackReply:
        """One interaction request: `body` as sent (form-encoded), `headers` with lower-case names."""
        refused = self._unverified(body, headers)
        if refused is not None:
            logger.warning("slack request refused: %s", refused)
            return SlackReply(401, {"error": refused})
        try:
            payload = json.loads(urllib.parse.parse_qs(body, strict_parsing=True)["payload"][0])
        except (ValueError, KeyError, IndexError):
            return SlackReply(400, {"error": "the body must be a form with a JSON `payload`, as Slack sends"})
        if not isinstance(payload, dict):
            return SlackReply(400, {"error": "payload must be a JSON object"})
        kind = payload.get("type")
        if kind == "block_actions":
            return self._action(payload)
        if kind == "view_submission" and (payload.get("view") or {}).get("callback_id") == _blocks.MODAL_CALLBACK:
            return self._submission(payload)
        return SlackReply(200)  # another interaction of the app's (a shortcut, a closed modal): nothing to do

    def _unverified(self, body: str, headers: Mapping[str, str]) -> str | None:
        """Why the request is not Slack's (or is too old), or None when it verifies."""
        timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
        if not timestamp or not signature:
            return "unsigned: X-Slack-Request-Timestamp and X-Slack-Signature are required"
        if not timestamp.isdigit():
            return "bad timestamp: X-Slack-Request-Timestamp must be whole seconds"
        if abs(self.clock().timestamp() - int(timestamp)) > MAX_SKEW_SECONDS:
            return f"stale: the request's timestamp is more than {MAX_SKEW_SECONDS} s from now (a replay?)"
        if not self.verifier.is_valid(body, timestamp, signature):
            return "bad signature: X-Slack-Signature does not verify with the app's signing secret"
        return None

    # -- a button ---------------------------------------------------------------------------------------------

    def _action(self, payload: dict[str, Any]) -> SlackReply:
        actions = payload.get("actions") or []
        action = actions[0] if actions and isinstance(actions[0], dict) else {}
        action_id, question_id = str(action.get("action_id") or ""), str(action.get("value") or "")
        response_url = payload.get("response_url")
        if action_id == _blocks.OPEN_MODAL:
            return self._open_modal(payload, question_id, response_url)
        if not action_id.startswith(_blocks.ACTION_PREFIX) or not question_id:
            return SlackReply(200)  # a button that is not ours
        chosen = action_id.removeprefix(_blocks.ACTION_PREFIX)
        seed = f"{action_id}\0{action.get('action_ts') or ''}"
        text, _ = self._verdict(payload, question_id, {"action": chosen}, seed, said=f"“{chosen}”")
        self._tell(response_url, text)
        return SlackReply(200)

    def _open_modal(self, payload: dict[str, Any], question_id: str, response_url: Any) -> SlackReply:
        record = self.find(question_id) if question_id else None
        if record is None or record.status.value != "open":
            self._tell(response_url, "Nothing to answer: " + (_outcome_text(record) if record else "no such question."))
            return SlackReply(200)
        self.client.views_open(trigger_id=payload.get("trigger_id"), view=_blocks.modal_view(record.envelope))
        return SlackReply(200)

    # -- a modal ------------------------------------------------------------------------------------------------

    def _submission(self, payload: dict[str, Any]) -> SlackReply:
        view = payload.get("view") or {}
        question_id = str(view.get("private_metadata") or "")
        record = self.find(question_id) if question_id else None
        if record is None:
            return _modal_error("no such question any more")
        try:
            answer = _modal_answer(record.envelope, (view.get("state") or {}).get("values") or {})
        except ArgumentError as exc:
            return _modal_error(str(exc), block=exc.argument)
        seed = f"view\0{view.get('id') or ''}\0{view.get('hash') or ''}"
        text, refused = self._verdict(payload, question_id, answer, seed, said="your answer")
        if refused:
            return _modal_error(text)
        self._tell(payload.get("response_url") or _first_response_url(payload), text)
        return SlackReply(200, {"response_action": "clear"})

    # -- deciding -----------------------------------------------------------------------------------------------

    def _verdict(
        self, payload: dict[str, Any], question_id: str, answer: Any, seed: str, *, said: str
    ) -> tuple[str, bool]:
        """(what to tell the person, whether it was refused)."""
        record = self.find(question_id)
        if record is None:
            return "Not recorded: there is no such question any more.", True
        answerer = self._answerer(payload, record)
        digest = hashlib.sha256(f"{answerer.sender}\0{question_id}\0{seed}".encode()).hexdigest()[:40]
        result = self.service.answer(question_id, answer, answerer, answer_id=f"slack:{digest}")
        verdict = result.verdict
        if verdict.kind is VerdictKind.DECIDED:
            return f"Done: {said} is recorded, and the agent carries on.", False
        if verdict.kind is VerdictKind.VOTED:
            needed = _remaining(verdict.record)
            return f"Your vote {said} is recorded; {needed} more approval(s) needed.", False
        if verdict.kind is VerdictKind.REPEATED:
            return f"{said[0].upper()}{said[1:]} was already recorded; nothing changed.", False
        reason = verdict.reason
        if reason in (RefusalReason.ALREADY_DECIDED, RefusalReason.EXPIRED, RefusalReason.CANCELLED) and verdict.record:
            return f"Not recorded: {_outcome_text(verdict.record)}", True
        if reason is RefusalReason.ALREADY_VOTED:
            return "Not recorded: you voted already; a second vote changes nothing.", True
        why = _REFUSED.get(reason) if reason is not None else None
        return f"Not recorded: {why or verdict.detail or 'the answer was refused'}.", True

    def _answerer(self, payload: dict[str, Any], record: Any) -> Answerer:
        user = payload.get("user") or {}
        user_id = str(user.get("id") or "")
        team = str(user.get("team_id") or (payload.get("team") or {}).get("id") or "")
        subject = f"slack:{team}:{user_id}"
        # Their address when the app may read it (users:read.email), else their Slack id: never the display name.
        return answerer_for(
            "slack",
            person=address_key(self._email(user_id)) or subject,
            subject=subject,
            groups=self._groups(user_id, record),
            principal=f"slack:{user_id}",  # what a policy names as an answerer principal for this Slack user
        )

    def _email(self, user_id: str) -> str | None:
        try:
            profile = (self.client.users_info(user=user_id).get("user") or {}).get("profile") or {}
        except Exception as exc:  # no users:read.email scope, or Slack is slow: name them by their Slack id
            logger.info("users.info failed for a Slack user: %s", type(exc).__name__)
            return None
        email = profile.get("email")
        return str(email) if email else None

    def _groups(self, user_id: str, record: Any) -> tuple[str, ...]:
        """The question's answerer groups whose Slack user group lists `user_id` (only those the question needs)."""
        answerers = record.envelope.rules.get("answerers") if isinstance(record.envelope.rules, Mapping) else None
        wanted = list((answerers or {}).get("groups") or ())
        return tuple(group for group in wanted if user_id in self._members_of(group))

    def _members_of(self, group: str) -> frozenset[str]:
        usergroup = self.routing.mentions.get(group)
        if not usergroup:
            return frozenset()
        cached = self._members.get(usergroup)
        if cached is not None and time.monotonic() - cached[0] < _GROUPS_TTL:
            return cached[1]
        users = frozenset(self.client.usergroups_users_list(usergroup=usergroup).get("users") or ())
        self._members[usergroup] = (time.monotonic(), users)
        return users

    def _tell(self, response_url: Any, text: str) -> None:
        if not isinstance(response_url, str) or (not response_url.startswith("https://") and not _local(response_url)):
            return
        try:
            self.respond(response_url, {"response_type": "ephemeral", "replace_original": False, "text": text})
        except Exception as exc:  # the decision stands; only the private reply is lost
            logger.warning("slack response_url reply failed: %s", type(exc).__name__)


def _local(url: str) -> bool:
    """A response URL on this machine (the local fake of Slack in tests and `agent-wait dev`)."""
    host = urllib.parse.urlsplit(url).hostname
    return url.startswith("http://") and host in ("127.0.0.1", "localhost")


def _post_json(url: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=2.5) as response:
        response.read()


def _first_response_url(payload: dict[str, Any]) -> Any:
    urls = payload.get("response_urls") or []
    return urls[0].get("response_url") if urls and isinstance(urls[0], dict) else None


def _remaining(record: Any) -> Any:
    from agent_wait.engine.votes import vote_progress

    return vote_progress(record).get("remaining") if record is not None else "?"


def _outcome_text(record: Any) -> str:
    outcome = record.outcome or record.status
    if outcome.value == "expired":
        return "nobody answered in time; the default applied."
    if outcome.value == "cancelled":
        return "the question was withdrawn."
    action = record.answer.get("action") if isinstance(record.answer, Mapping) else None
    via = {"slack": "in Slack", "api": "in the inbox", "link": "with a link", "queue": "on the queue"}.get(
        record.via or ""
    )
    return (
        f"{_blocks.person_text(record.answered_by)} answered"
        + (f" “{action}”" if action else "")
        + (f" {via}" if via else "")
        + (f" at {record.decided_at}" if record.decided_at else "")
        + "."
    )


def _modal_error(text: str, *, block: str | None = None) -> SlackReply:
    return SlackReply(200, {"response_action": "errors", "errors": {block or _blocks.NOTE_BLOCK: text[:150]}})


def _value(field: Mapping[str, Any]) -> Any:
    """One input's value as Slack sends it in `view.state.values`."""
    kind = field.get("type")
    if kind in ("static_select", "radio_buttons"):
        option = field.get("selected_option") or {}
        return option.get("value")
    return field.get("value")


def _modal_answer(envelope: Any, values: Mapping[str, Any]) -> Any:
    """The answer a submitted modal makes, typed as the question's schema or its call's arguments say.

    Raises:
        ArgumentError: a value that is not what its field takes (`argument` is the field's block id).
    """
    fields = {
        block_id: next(iter(inputs.values()), {}) for block_id, inputs in values.items() if isinstance(inputs, dict)
    }
    action = _value(fields.get(_blocks.ACTION_BLOCK, {}))
    note = _value(fields.get(_blocks.NOTE_BLOCK, {}))
    schema = envelope.rules.get("response_schema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    call = _blocks.call_of(envelope)
    typed: dict[str, Any] = {}
    for block_id, field in fields.items():
        if not block_id.startswith(_blocks.ARG_BLOCK):
            continue
        name = block_id.removeprefix(_blocks.ARG_BLOCK)
        raw = _value(field)
        if raw is None or raw == "":
            continue
        asked = call.args.get(name) if call is not None else None
        prop = properties.get(name, {}) if isinstance(properties, Mapping) else {}
        typed[name] = _typed(raw, field.get("type"), asked, prop, block_id)
    if isinstance(properties, Mapping):
        answer = dict(typed)
        if "action" in properties and action:
            answer["action"] = action
        if "note" in properties and note:
            answer["note"] = note
        return answer
    answer = {"action": action} if action else {}
    changed = {k: v for k, v in typed.items() if call is None or call.args.get(k) != v}
    if changed:
        answer["args"] = changed
    if note:
        answer["note"] = note
    return answer


def _typed(raw: Any, kind: Any, asked: Any, prop: Mapping[str, Any], block_id: str) -> Any:
    if kind == "static_select":
        if raw in ("true", "false") and not isinstance(prop.get("enum"), list):
            return raw == "true"
        return json.loads(raw)
    if kind == "number_input":
        try:
            number = float(raw)
        except ValueError:
            raise ArgumentError("must be a number", argument=block_id) from None
        whole = prop.get("type") == "integer" or (isinstance(asked, int) and not isinstance(asked, bool))
        if whole and not number.is_integer():
            raise ArgumentError("must be a whole number", argument=block_id)
        return int(number) if whole or (number.is_integer() and not isinstance(asked, float)) else number
    if isinstance(asked, str) or prop.get("type") == "string" or (asked is None and not prop):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        raise ArgumentError("must be JSON", argument=block_id) from None
