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
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.channels.push.subscriptions import Subscription, parse_subscription
from agent_wait.common.times import format_rfc3339
from agent_wait.errors import ArgumentError
from agent_wait.host.api._context import ApiContext, answerer_from_claims
from agent_wait.host.api._problems import NOT_JSON, json_body, json_response, problem
from agent_wait.host.api._push_inbox import PushInbox
from agent_wait.host.api._questions import jwt_claims, not_signed_in

__all__ = ("push_routes",)


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
