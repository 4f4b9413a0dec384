"""Slack's interactivity endpoint on the answer API: button clicks and modal submissions, decided through the one
decision path (`agent_wait.channels.slack.SlackInteractions`).

    POST /slack/interactions   form-encoded `payload`, signed by Slack (`X-Slack-Signature`, v0)

API Gateway serves it WITHOUT the JWT authorizer: Slack signs its requests instead, and a request that does not
verify with the app's signing secret, or is more than 5 minutes old, is refused 401 with nothing decided.
"""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from agent_wait.contract.schema import Settings
from agent_wait.host.api._context import ApiContext
from agent_wait.host.api._problems import json_response, problem

__all__ = ("SLACK_INTERACTIONS", "slack_routes")

SLACK_INTERACTIONS = "/slack/interactions"
"""The path the Slack app's Interactivity Request URL names (the API's URL + this)."""


def slack_routes(context: Callable[[], ApiContext]) -> Router:
    """The Slack route; `context().slack` handles it (None: Slack is off, and every request is refused)."""
    router = Router()

    @router.post(SLACK_INTERACTIONS)
    def slack_interaction() -> Response:
        slack = context().slack
        if slack is None:
            return problem(
                404,
                "slack_off",
                f"Slack is not set up on this API: set {Settings.SLACK_SIGNING_SECRET_ARN.value} and "
                f"{Settings.SLACK_BOT_TOKEN_ARN.value}",
            )
        event = router.current_event
        headers = {name.lower(): value for name, value in (event.headers or {}).items()}
        reply = slack.handle(event.decoded_body or "", headers)
        if reply.body is None:
            return Response(status_code=reply.status, body="")
        return json_response(reply.status, reply.body)

    return router
