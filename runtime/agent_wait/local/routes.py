"""The answer API's routes as API Gateway serves them, by authorizer: what `LocalApi` plays for `agent-wait dev`.

The `AgentWait` construct is the source (`agent_wait_cdk.answer_api`); the runtime never imports the constructs, so
tests/local/test_local_api.py keeps these lists equal to the construct's. Standard library only.
"""

from __future__ import annotations

__all__ = ("PROTECTED_ROUTES", "PUBLIC_ROUTES")

PROTECTED_ROUTES: tuple[str, ...] = (
    "GET /questions",
    "GET /questions/{question_id}",
    "POST /questions/{question_id}/answer",
    "GET /agui/interrupts",
    "POST /questions/{question_id}/cancel",
    "POST /questions/answers",
    "POST /agui/resume",
    "GET /insights",
    "GET /audit",
    "POST /questions/{question_id}/extend",
    "GET /grants",
    "GET /grants/{grant_id}",
    "DELETE /grants/{grant_id}",
    "POST /grants/dry-run",
    "POST /a2a",
    "GET /passkeys",
    "POST /passkeys/registration/options",
    "POST /passkeys/registration",
    "POST /questions/{question_id}/passkey",
    "GET /push/key",
    "POST /push/subscriptions",
    "DELETE /push/subscriptions/{device}",
)
"""The routes the `AgentWait` construct puts behind the JWT authorizer (`agent_wait_cdk.answer_api.SIGNED_IN_ROUTES`;
the runtime never imports the constructs, so tests/local/test_local_api.py keeps the two lists equal)."""
PUBLIC_ROUTES: tuple[str, ...] = (
    "ANY /questions/{question_id}/confirm",
    "ANY /questions/{question_id}/link",
    "ANY /questions/{question_id}/link/answer",
    "GET /inbox",
    "GET /inbox/{asset}",
    "POST /slack/interactions",
    "GET /.well-known/agent-card.json",
)
"""Routes with no authorizer (signed links carry their own proof; the inbox page and its files hold no question
content); any other path goes to the handler as `$default`, with no authorizer either."""
