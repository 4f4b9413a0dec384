"""`SlackInteractions`: the button clicks and modal submissions Slack sends, decided through the one decision path.

Slack POSTs each interaction to the answer API's `POST /slack/interactions` as a form field `payload` (JSON),
signed with the app's signing secret. This module:

1. refuses a request whose `X-Slack-Signature` (v0: HMAC-SHA256 of `v0:<timestamp>:<body>`) does not verify, or
   whose `X-Slack-Request-Timestamp` is more than 5 minutes from now (a replay), with 401 and nothing decided;
2. reads what was said as every door reads an answer (`agent_wait.contract.messages.parse_answer`; a form's fields in
   `agent_wait.channels.slack._form`), so the form refuses what the API refuses, in its words, on the field concerned;
3. names the person: the address Slack's profile gives (`users.info`, scope `users:read.email`), else their Slack
   user `slack:<team>:<user>` (never a display name), and a member of each answerer group in effect now (escalation
   steps included) whose Slack user group (`SlackRouting.mentions`) lists them (`usergroups.users.list`);
4. decides through `AnswerService` (the desk's rules: actions, answerers, edits, schema, quorum; the thread held;
   the router handed the decision), exactly as the inbox, the API and signed links do, waiting at most
   `ACK_LEASE_WAIT` for a run on the thread so Slack has its answer within its 3 seconds;
5. tells the person what happened, privately (an ephemeral reply through the interaction's `response_url`, before
   the 200, so it is sent even on Lambda): done, already decided by someone (who, how), a vote recorded, or refused
   and why (a busy thread: try again). A modal that is refused keeps its values and shows why on its form.

The answer id is derived from the user, the question, the button and Slack's `action_ts`, so a payload Slack (or
anyone) sends again repeats its outcome and never decides twice. The message itself is redrawn by `SlackAnnounce`
when the router announces the decision, for every door.

Long on purpose: it is the one door for every Slack answer (buttons, the answer modal, grant offers and the
"Approve and allow…" modal): each shares the verification, the naming of the person and the private reply.
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

from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from agent_wait.channels.slack import _blocks, _grants
from agent_wait.channels.slack._form import FilledForm
from agent_wait.channels.slack.announce import SlackRouting
from agent_wait.common.times import utc_now
from agent_wait.contract.messages import parse_answer
from agent_wait.engine.answering import VerdictKind
from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.outcomes import RefusalReason
from agent_wait.errors import MessageError
from agent_wait.people.keys import address_key

__all__ = ("ACK_LEASE_WAIT", "MAX_SKEW_SECONDS", "SlackInteractions", "SlackReply")

logger = logging.getLogger("agent_wait.channels.slack")

MAX_SKEW_SECONDS = 300
"""How far a request's timestamp may be from now: Slack's own advice, 5 minutes."""
_GROUPS_TTL = 60.0
"""How long a Slack user group's members are remembered (per process)."""
ACK_LEASE_WAIT = 1.0
"""How long a click or a form waits for a run holding its thread before it is refused `thread_busy` (the person is
told to try again). Slack gives up on a request after 3 s, and this door also reads Slack's directory and answers
through the response URL in that time (docs/slack.md, "Within Slack's 3 seconds")."""
_RESPONSE_TIMEOUT = 1.0
"""How long the private reply through a `response_url` may take; past it only that reply is lost, never the decision."""
_SLACK_BUSY = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"})
"""`users.info` errors that say nothing about the person: Slack could not answer just now."""
_ERROR_MAX = 150
"""The longest error Slack shows on one of a form's fields."""
_UNNAMED = "Not recorded: Slack did not say who you are just now; try again in a few seconds."
_NO_FORM = "The form did not open: Slack did not answer in time; try again in a few seconds."

_STALE_OFFER = (
    "the grant was refused (not_grantable): this question no longer offers that grant; nothing was decided. "
    "Approve, or use “Approve and allow…”"
)
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


@dataclass(frozen=True, slots=True)
class _Told:
    """What became of one answer, for the person who gave it."""

    text: str
    """What they are told (privately, or on the form)."""
    refused: bool
    detail: str | None = None
    """The API's own words for a refusal of what was said (`bad_answer`, `invalid_answer`): the form shows these on
    the field concerned; None for any other outcome."""


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
        lease_wait: how long an answer waits for a run holding its thread (`ACK_LEASE_WAIT`).
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
        lease_wait: float = ACK_LEASE_WAIT,
    ) -> None:
        self.verifier = SignatureVerifier(signing_secret, clock=_Clock(clock))  # type: ignore[arg-type]
        self.service = service
        self.find = find
        self.client = client
        self.routing = routing
        self.clock = clock
        self.respond = respond or _post_json
        self.lease_wait = lease_wait
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
        except (ValueError, KeyError, IndexError, RecursionError):
            return SlackReply(400, {"error": "the body must be a form with a JSON `payload`, as Slack sends"})
        if not isinstance(payload, dict):
            return SlackReply(400, {"error": "payload must be a JSON object"})
        kind = payload.get("type")
        if kind == "block_actions":
            return self._action(payload)
        callback = (payload.get("view") or {}).get("callback_id")
        if kind == "view_submission" and callback in (_blocks.MODAL_CALLBACK, _grants.GRANT_MODAL_CALLBACK):
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
        if action_id in (_blocks.OPEN_MODAL, _grants.OPEN_GRANT_MODAL):
            return self._open_modal(payload, question_id, response_url, grant=action_id == _grants.OPEN_GRANT_MODAL)
        seed = f"{action_id}\0{action.get('action_ts') or ''}"
        if action_id.startswith(_grants.GRANT_PREFIX) and question_id:
            told = self._offer(payload, question_id, action_id.removeprefix(_grants.GRANT_PREFIX), seed)
            self._tell(response_url, told.text)
            return SlackReply(200)
        if not action_id.startswith(_blocks.ACTION_PREFIX) or not question_id:
            return SlackReply(200)  # a button that is not ours
        chosen = action_id.removeprefix(_blocks.ACTION_PREFIX)
        told = self._decide(payload, question_id, {"action": chosen}, seed, said=f"“{chosen}”")
        # Told before the 200: on Lambda nothing runs after the response, and the response_url takes replies first.
        self._tell(response_url, told.text)
        return SlackReply(200)

    def _offer(self, payload: dict[str, Any], question_id: str, index: str, seed: str) -> _Told:
        """A grant offer's button: the offer as the question's row offers it now, through the desk."""
        record = self.find(question_id)
        answer = _grants.offer_answer(record, int(index)) if record is not None and index.isdigit() else None
        if answer is None:
            return _Told(f"Not recorded: {_STALE_OFFER}", True)
        return self._decide(payload, question_id, answer, seed, said="your approval and its grant")

    def _open_modal(self, payload: dict[str, Any], question_id: str, response_url: Any, *, grant: bool) -> SlackReply:
        record = self.find(question_id) if question_id else None
        if record is None or record.status.value != "open":
            self._tell(response_url, "Nothing to answer: " + (_outcome_text(record) if record else "no such question."))
            return SlackReply(200)
        envelope = record.envelope
        view = _grants.grant_modal_view(envelope) if grant else _blocks.modal_view(envelope)
        try:
            self.client.views_open(trigger_id=payload.get("trigger_id"), view=view)
        except Exception as exc:  # Slack slow or refusing: the trigger lasts 3 s, so the person clicks again
            logger.warning("views.open failed: %s", type(exc).__name__)
            self._tell(response_url, _NO_FORM)
        return SlackReply(200)

    # -- a modal ------------------------------------------------------------------------------------------------

    def _submission(self, payload: dict[str, Any]) -> SlackReply:
        view = payload.get("view") or {}
        question_id = str(view.get("private_metadata") or "")
        record = self.find(question_id) if question_id else None
        if record is None:
            return _modal_error("no such question any more")
        values = (view.get("state") or {}).get("values")
        values = values if isinstance(values, Mapping) else {}
        if view.get("callback_id") == _grants.GRANT_MODAL_CALLBACK:
            return self._grant_submission(payload, record, values)
        form = FilledForm(record.envelope, values)
        try:
            answer = form.answer()
        except MessageError as exc:  # refused as the API refuses it; nothing is decided
            return _modal_error(exc.message, block=form.block_of(exc.message))
        seed = f"view\0{view.get('id') or ''}\0{view.get('hash') or ''}"
        told = self._decide(payload, question_id, answer, seed, said="your answer")
        if told.detail is not None:
            return _modal_error(told.detail, block=form.block_of(told.detail))
        if told.refused:
            return _modal_error(told.text)
        self._tell(payload.get("response_url") or _first_response_url(payload), told.text)
        return SlackReply(200, {"response_action": "clear"})

    def _grant_submission(self, payload: dict[str, Any], record: Any, values: Mapping[str, Any]) -> SlackReply:
        """The "Approve and allow…" modal: the approval with the grant as filled, through the desk; a refusal (the
        grant would widen, or outlive the policy's limit) keeps the form open and says why."""
        try:
            answer = _grants.modal_grant_answer(record.envelope, values)
        except MessageError as exc:
            block, _, why = exc.message.partition(": ")
            return _modal_error(why or exc.message, block=block if block in values else None)
        view = payload.get("view") or {}
        seed = f"grant\0{view.get('id') or ''}\0{view.get('hash') or ''}"
        told = self._decide(payload, record.question_id, answer, seed, said="your approval and its grant")
        if told.refused:
            return _modal_error(told.text, block=_grants.SCOPE_BLOCK)
        self._tell(payload.get("response_url") or _first_response_url(payload), told.text)
        return SlackReply(200, {"response_action": "clear"})

    # -- deciding -----------------------------------------------------------------------------------------------

    def _decide(self, payload: dict[str, Any], question_id: str, answer: Any, seed: str, *, said: str) -> _Told:
        """Decide one answer through the answer service, and say what became of it."""
        record = self.find(question_id)
        if record is None:
            return _Told("Not recorded: there is no such question any more.", True)
        try:
            answer = parse_answer(answer)  # the one reading of an answer, as every door reads it
        except MessageError as exc:
            return _Told(f"Not recorded: {exc.message}.", True, exc.message)
        answerer = self._answerer(payload, record)
        if answerer is None:
            return _Told(_UNNAMED, True)
        digest = hashlib.sha256(f"{answerer.sender}\0{question_id}\0{seed}".encode()).hexdigest()[:40]
        result = self.service.answer(
            question_id, answer, answerer, answer_id=f"slack:{digest}", lease_wait=self.lease_wait
        )
        return _told(result.verdict, said)

    def _answerer(self, payload: dict[str, Any], record: Any) -> Answerer | None:
        """Who clicked, as Slack proves it; None when Slack could not say just now (who they are, or their groups)."""
        user = payload.get("user") or {}
        user_id = str(user.get("id") or "")
        team = str(user.get("team_id") or (payload.get("team") or {}).get("id") or "")
        subject = f"slack:{team}:{user_id}"
        answered, email = self._email(user_id)
        if not answered:
            return None
        try:
            groups = self._groups(user_id, record)
        except Exception as exc:  # Slack could not list a group's members just now: refusing would be untrue
            logger.warning("usergroups.users.list failed: %s", type(exc).__name__)
            return None
        # Their address when the app may read it (users:read.email), else their Slack id: never the display name.
        return answerer_for(
            "slack",
            person=address_key(email) or subject,
            subject=subject,
            groups=groups,
            principal=f"slack:{user_id}",  # what a policy names as an answerer principal for this Slack user
        )

    def _email(self, user_id: str) -> tuple[bool, str | None]:
        """(whether Slack said who `user_id` is, the address in their profile, if the app may read it).

        An app without `users:read.email` (or `users:read`) is told no address, and names people by their Slack id.
        An outage says nothing about the person: naming them by their Slack id then would make one person two (their
        address in another door, their Slack id here), so the answer is refused and they try again.
        """
        try:
            profile = (self.client.users_info(user=user_id).get("user") or {}).get("profile") or {}
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "")
            if error in _SLACK_BUSY or exc.response.status_code >= 500:
                logger.warning("users.info failed for a Slack user: %s", error or exc.response.status_code)
                return False, None
            logger.info("users.info gave no profile for a Slack user: %s", error)  # missing_scope, user_not_found
            return True, None
        except Exception as exc:  # a timeout, a connection reset: Slack could not answer
            logger.warning("users.info failed for a Slack user: %s", type(exc).__name__)
            return False, None
        email = profile.get("email")
        return True, (str(email) if email else None)

    def _groups(self, user_id: str, record: Any) -> tuple[str, ...]:
        """The answerer groups in effect now (escalation steps included), and the groups the policy lets grant, whose
        Slack user group lists `user_id`."""
        answerers = record.answerers_at(self.clock())  # the audience the desk checks
        granters = (record.envelope.rules.get("grants") or {}).get("groups") or ()
        wanted = dict.fromkeys([*((answerers or {}).get("groups") or ()), *granters])
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


def _told(verdict: Any, said: str) -> _Told:
    """What to tell the person about the desk's verdict on what they `said`."""
    if verdict.kind is VerdictKind.DECIDED:
        return _Told(f"Done: {said} is recorded, and the agent carries on.", False)
    if verdict.kind is VerdictKind.VOTED:
        needed = _remaining(verdict.record)
        return _Told(f"Your vote {said} is recorded; {needed} more approval(s) needed.", False)
    if verdict.kind is VerdictKind.REPEATED:
        return _Told(f"{said[0].upper()}{said[1:]} was already recorded; nothing changed.", False)
    reason = verdict.reason
    if reason in (RefusalReason.ALREADY_DECIDED, RefusalReason.EXPIRED, RefusalReason.CANCELLED) and verdict.record:
        return _Told(f"Not recorded: {_outcome_text(verdict.record)}", True)
    if reason is RefusalReason.ALREADY_VOTED:
        return _Told("Not recorded: you voted already; a second vote changes nothing.", True)
    if reason is RefusalReason.INVALID_ANSWER and verdict.detail:  # the API's words, shown on the form's field
        return _Told(f"Not recorded: {verdict.detail}.", True, verdict.detail)
    why = _REFUSED.get(reason) if reason is not None else None
    return _Told(f"Not recorded: {why or verdict.detail or 'the answer was refused'}.", True)


def _local(url: str) -> bool:
    """A response URL on this machine (the local fake of Slack in tests and `agent-wait dev`)."""
    host = urllib.parse.urlsplit(url).hostname
    return url.startswith("http://") and host in ("127.0.0.1", "localhost")


def _post_json(url: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=_RESPONSE_TIMEOUT) as response:
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
    via = {
        "slack": "in Slack",
        "api": "in the inbox",
        "link": "with a link",
        "queue": "on the queue",
        "grant": "by a standing grant",
    }.get(record.via or "")
    return (
        f"{_blocks.person_text(record.answered_by)} answered"
        + (f" “{action}”" if action else "")
        + (f" {via}" if via else "")
        + (f" at {record.decided_at}" if record.decided_at else "")
        + "."
    )


def _modal_error(text: str, *, block: str | None = None) -> SlackReply:
    """The form again, with `text` on `block` (the note, the form's last field, when none is named)."""
    shown = text if len(text) <= _ERROR_MAX else text[: _ERROR_MAX - 1] + "…"
    return SlackReply(200, {"response_action": "errors", "errors": {block or _blocks.NOTE_BLOCK: shown}})
