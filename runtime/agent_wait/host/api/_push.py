"""Web push subscriptions over HTTPS, for a person signed in with a JWT (the inbox's "Notify me on this device"):

    GET    /push/key                     {"public_key": ...}: the VAPID public key, the Push API's applicationServerKey
    POST   /push/subscriptions           the browser's PushSubscription.toJSON(); 201 {"device", "person", "groups"}
    DELETE /push/subscriptions/{device}  stop pushing to this device (204; 404 when it is not the person's)

A subscription is kept under the person key the answer API records for this token (`answerer_from_claims`) and the
device's id (a digest of the endpoint), with the token's groups, so the router and the sweep push to the people a
policy names by group or by principal (`agent_wait.channels.push`). Subscribing again from the same device replaces
its subscription (and refreshes its groups). Off (404 `push_not_enabled`) unless `AGENT_WAIT_PUSH_KEYS_ARN` and
`AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE` are set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.channels.push.subscriptions import PushSubscriptions, Subscription, parse_subscription
from agent_wait.common.times import format_rfc3339
from agent_wait.errors import ArgumentError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import NOT_JSON, json_body, json_response, problem
from agent_wait.host.api._questions import jwt_claims, not_signed_in

__all__ = ("PushInbox", "push_inbox", "push_routes")


@dataclass(frozen=True, slots=True)
class PushInbox:
    """What the push routes need: the VAPID public key and the subscriptions."""

    public_key: str
    """The VAPID public key (base64url), given to the page."""
    subscriptions: PushSubscriptions
    allow_loopback: bool = False
    """Take `http://127.0.0.1` endpoints (`agent-wait dev`'s local push service): only when the API itself is local."""


def push_inbox(settings: Any, *, session: Any) -> PushInbox | None:
    """The push routes' part of the API's context from its settings (the keys read once); None when push is off.

    Raises:
        ConfigurationError: the keys' secret cannot be read or is not a VAPID key pair.
    """
    push = settings.push
    if push is None:
        return None
    from agent_wait.channels.push.keys import VapidKeys
    from agent_wait.channels.push.subscriptions import DynamoDbPushSubscriptions
    from agent_wait.contract.schema import Settings
    from agent_wait.host._clients import client, secret_string

    variable = Settings.PUSH_KEYS_ARN.value
    text = secret_string(push.keys_arn, variable, "the VAPID key pair", session) or ""
    keys = VapidKeys.parse(text, variable=variable)
    local = (settings.api_url or "").startswith("http://127.0.0.1:")
    table = DynamoDbPushSubscriptions(push.subscriptions_table, client=client(session, "dynamodb"))
    return PushInbox(keys.public_key, table, allow_loopback=local)


def push_routes(context: Callable[[], ApiContext]) -> Router:
    """The `/push` routes; `context()` gives the push part (`ApiContext.push`), the groups claims and the clock."""
    router = Router()

    def ready() -> tuple[PushInbox, ApiContext, dict[str, Any]] | Response:
        claims = jwt_claims(router.current_event)
        if claims is None:
            return not_signed_in()
        ctx = context()
        if ctx.push is None:
            return problem(
                404,
                "push_not_enabled",
                "web push is not set up on this API: AgentWait(push=PushProps(...)) sets AGENT_WAIT_PUSH_KEYS_ARN and "
                "AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE (docs/phone.md)",
            )
        return ctx.push, ctx, claims

    @router.get("/push/key")
    def public_key() -> Response:
        found = ready()
        if isinstance(found, Response):
            return found
        return json_response(200, {"public_key": found[0].public_key})

    @router.post("/push/subscriptions")
    def subscribe() -> Response:
        found = ready()
        if isinstance(found, Response):
            return found
        push, ctx, claims = found
        person = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        if person.answered_by is None:
            return problem(403, "no_person", "the token names nobody (no verified email, no subject): sign in again")
        body = json_body(router.current_event.body)
        if isinstance(body, Response):
            return body
        try:
            if body is NOT_JSON:
                raise ArgumentError("send the browser's PushSubscription as JSON", argument="subscription")
            keys = parse_subscription(body, allow_loopback=push.allow_loopback)
        except ArgumentError as exc:
            return problem(422, "bad_subscription", exc.message, title="Subscription not taken", field=exc.argument)
        subscription = Subscription(
            person.answered_by,
            keys.endpoint,
            keys.p256dh,
            keys.auth,
            subject=person.subject,
            groups=person.groups,
            created_at=format_rfc3339(ctx.clock()),
        )
        push.subscriptions.put(subscription)
        view = {"device": subscription.device, "person": subscription.person, "groups": list(subscription.groups)}
        return json_response(201, view)

    @router.delete("/push/subscriptions/<device>")
    def unsubscribe(device: str) -> Response:
        found = ready()
        if isinstance(found, Response):
            return found
        push, ctx, claims = found
        person = answerer_from_claims(claims, groups_claims=ctx.groups_claims)
        if person.answered_by is None or not push.subscriptions.remove(person.answered_by, device):
            return problem(404, "unknown_device", f"no push subscription {device!r} is yours", title="Not subscribed")
        return Response(status_code=204, content_type="application/json", body="")

    return router
