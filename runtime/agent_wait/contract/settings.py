"""The `AGENT_WAIT_*` environment variables the Lambda handlers read, each with its doc line.

The one list the handlers (`agent_wait.host.settings` checks them), the constructs (they set them) and docs/host.md
(`tests/docs/test_host_settings.py` compares its table) agree on. `agent_wait.contract.schema` exports it too.
Standard library only.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ("Settings",)


class Settings(StrEnum):
    """Environment variables the Lambda handlers read (the constructs set them)."""

    GRAPH = "AGENT_WAIT_GRAPH"
    """`module:attribute`: a compiled LangGraph graph or a factory that takes a checkpointer, a Pydantic AI
    agent, or a `hosted(...)` value from `agent_wait.pydantic_ai` / `agent_wait.strands`."""
    TABLE = "AGENT_WAIT_TABLE"
    """The question ledger table name."""
    CHECKPOINT_TABLE = "AGENT_WAIT_CHECKPOINT_TABLE"
    """The checkpoint table name."""
    QUEUE_URL = "AGENT_WAIT_QUEUE_URL"
    """The entry FIFO queue (the sweep sends defaults here)."""
    DLQ_URL = "AGENT_WAIT_DLQ_URL"
    """The entry queue's dead-letter queue (malformed messages go here with their reason)."""
    TOPIC_ARN = "AGENT_WAIT_TOPIC_ARN"
    """Optional: announce on this SNS topic."""
    BUS_NAME = "AGENT_WAIT_BUS_NAME"
    """Optional: announce on this EventBridge bus."""
    WEBHOOK_URL = "AGENT_WAIT_WEBHOOK_URL"
    """Optional: announce to this webhook, named in plain text. A webhook URL usually carries a token (Slack, Teams):
    prefer `AGENT_WAIT_WEBHOOK_URL_SECRET_ARN`; the two are not set together."""
    WEBHOOK_URL_SECRET_ARN = "AGENT_WAIT_WEBHOOK_URL_SECRET_ARN"
    """Optional: announce to the webhook whose URL is this Secrets Manager secret's value (read once at cold start)."""
    SWEEP_LIMIT = "AGENT_WAIT_SWEEP_LIMIT"
    """Optional: the most due questions one sweep run handles (default 100); the next run picks up the rest."""
    WEBHOOK_SECRET_ARN = "AGENT_WAIT_WEBHOOK_SECRET_ARN"
    """Optional: a Secrets Manager secret whose value signs webhook deliveries (read once at cold start)."""
    LEASE_SECONDS = "AGENT_WAIT_LEASE_SECONDS"
    """Optional: how long the router holds a thread's lease (default 900, Lambda's longest timeout); the
    construct sets the router's timeout plus a margin. A lease outliving a dead holder blocks that long."""
    TRUSTED_SENDERS = "AGENT_WAIT_TRUSTED_SENDERS"
    """Optional: comma-separated IAM unique ids (`AROA...` of a role, `AIDA...` of a user) whose queue messages
    may claim `answered_by`, `via` and `origin: deadline`: the answer API's and the sweep's roles. Matched
    against the part of SQS's `SenderId` before any `:`. Unset: every sender is trusted (a warning at cold start)."""
    START_SENDERS = "AGENT_WAIT_START_SENDERS"
    """Optional: comma-separated IAM unique ids allowed to send starts; unset, any sender the queue lets in."""
    ANSWER_SENDERS = "AGENT_WAIT_ANSWER_SENDERS"
    """Optional: comma-separated IAM unique ids allowed to send answers; unset, any sender the queue lets in."""
    API_URL = "AGENT_WAIT_API_URL"
    """Optional: the answer API's base URL; envelopes carry it in `reply_to`, and signed links point at it."""
    LINK_KEYS_ARN = "AGENT_WAIT_LINK_KEYS_ARN"
    """Optional: a Secrets Manager secret with the keys that sign answer links (the newest signs, all verify)."""
    LINK_ANNOUNCERS = "AGENT_WAIT_LINK_ANNOUNCERS"
    """Optional: comma-separated announcer names (`sns`, `eventbridge`, `webhook`) whose envelopes carry signed
    answer links; never the log announcer. Unset: no announcer carries links."""
    GROUPS_CLAIM = "AGENT_WAIT_GROUPS_CLAIM"
    """Optional: the JWT claim that lists a user's groups (default `cognito:groups`, then `groups`)."""
    SIGN_IN_URL = "AGENT_WAIT_SIGN_IN_URL"
    """Optional: the OIDC authorization endpoint the inbox page signs people in at, with the authorization code
    flow and PKCE (Cognito: `https://<domain>/oauth2/authorize`). With `AGENT_WAIT_SIGN_IN_TOKEN_URL` and
    `AGENT_WAIT_SIGN_IN_CLIENT_ID`; unset, the page asks for a bearer token instead."""
    SIGN_IN_TOKEN_URL = "AGENT_WAIT_SIGN_IN_TOKEN_URL"
    """Optional: the OIDC token endpoint the inbox page exchanges its code at (Cognito: `https://<domain>/oauth2/token`);
    the page's Content-Security-Policy lets it connect to this origin."""
    SIGN_IN_CLIENT_ID = "AGENT_WAIT_SIGN_IN_CLIENT_ID"
    """Optional: the public OIDC client (no secret) the inbox page signs in as; the API's JWT authorizer must accept
    its tokens (its audience, or the user pool client). Its callback URL is the API's URL + `/inbox`."""
    SIGN_IN_SCOPES = "AGENT_WAIT_SIGN_IN_SCOPES"
    """Optional: the space-separated scopes the inbox page asks for (default `openid email`)."""
    MAX_RECEIVE_COUNT = "AGENT_WAIT_MAX_RECEIVE_COUNT"
    """Optional: the entry queue's `maxReceiveCount`; on the last receive the router dead-letters a message it
    still cannot apply, with its reason, instead of leaving SQS to move it without one (default 5)."""
    INDEX_SHARDS = "AGENT_WAIT_INDEX_SHARDS"
    """Optional: how many shards each shared index key value of the question table has (default 8). Every
    function that uses the ledger must have the same value; raise it (never lower it: rows in the shards
    dropped would no longer be found) for more than about 2,000 lifecycles a second (see docs/scaling.md)."""
    SLACK_BOT_TOKEN_ARN = "AGENT_WAIT_SLACK_BOT_TOKEN_ARN"
    """Optional: a Secrets Manager secret whose value is the Slack app's bot token (`xoxb-...`). Set, the router and
    the sweep post each question to Slack (`agent_wait.channels.slack`), and the answer API reads people's emails and
    groups there. Needs `AGENT_WAIT_SLACK_CHANNELS` and `AGENT_WAIT_SLACK_MESSAGES_TABLE`."""
    SLACK_SIGNING_SECRET_ARN = "AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"
    """Optional: a Secrets Manager secret whose value is the Slack app's signing secret: the answer API's
    `POST /slack/interactions` takes only requests it signed, and refuses them all without it."""
    SLACK_CHANNELS = "AGENT_WAIT_SLACK_CHANNELS"
    """Optional: a JSON object from a policy tag (`"approver_group:finance"`) to the Slack channel id its questions
    go to (`"C0123ABCD"`), with `"*"` for every other question."""
    SLACK_GROUPS = "AGENT_WAIT_SLACK_GROUPS"
    """Optional: a JSON object from an answerer group (`"finance"`) to its Slack user group id (`"S0123ABCD"`):
    Slack mentions it, and its members answer as members of the group."""
    SLACK_MESSAGES_TABLE = "AGENT_WAIT_SLACK_MESSAGES_TABLE"
    """Optional: the DynamoDB table (partition key `question_id`) that remembers each question's Slack messages."""
    SLACK_API_URL = "AGENT_WAIT_SLACK_API_URL"
    """Optional: the Slack Web API's base URL (default `https://slack.com/api/`); a local fake in tests and dev."""
    TEAMS_WEBHOOK_URL_ARN = "AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN"
    """Optional: a Secrets Manager secret whose value is a Teams Workflows webhook's URL (its trigger URL, with its
    signature). Set, the router and the sweep post each question, its follow-ups and its outcome to Teams as
    Adaptive Cards (`agent_wait.channels.teams`)."""
    TEAMS_MODE = "AGENT_WAIT_TEAMS_MODE"
    """Optional: `people` (default: one card per recipient, with links bound to that person; needs
    `AGENT_WAIT_TEAMS_RECIPIENTS`) or `channel` (one card, with unbound links only where anyone may answer)."""
    TEAMS_RECIPIENTS = "AGENT_WAIT_TEAMS_RECIPIENTS"
    """Optional: who each question's Teams cards go to, as JSON `{"groups": {group: [address, ...]}, "tags":
    {"key:value" or "*": [address, ...]}}` (besides `email:` answerer principals); addresses are Teams sign-ins."""
    TEAMS_SENDS_TABLE = "AGENT_WAIT_TEAMS_SENDS_TABLE"
    """Optional: a DynamoDB table (partition key `question_id`, string; TTL on `ttl`) where each Teams card is claimed
    before it is posted and marked accepted after, so a redelivered event never posts a card twice. Unset, every
    delivery posts every card (the `AgentWait` construct creates and sets it)."""
    SHAPED_WEBHOOK_URL_ARN = "AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN"
    """Optional: a Secrets Manager secret whose value is the URL a shaped webhook POSTs to (a chat tool's incoming
    webhook). Needs `AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES`."""
    SHAPED_WEBHOOK_TEMPLATES = "AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES"
    """Optional: the shaped webhook's templates as JSON, a transition (`created`, ...) or `default` → a Jinja2
    template that renders the JSON to POST (`agent_wait.channels.shaped`)."""
    EMAIL_FROM = "AGENT_WAIT_EMAIL_FROM"
    """Optional: the `From` of the question emails, a verified Amazon SES identity (`Approvals <ask@example.com>`).
    Set, the router and the sweep email each question to its recipients (`agent_wait.channels.email`); needs
    `AGENT_WAIT_EMAIL_SENDS_TABLE`, and for buttons `AGENT_WAIT_LINK_KEYS_ARN` and `AGENT_WAIT_API_URL`."""
    EMAIL_RECIPIENTS = "AGENT_WAIT_EMAIL_RECIPIENTS"
    """Optional: JSON `{"groups": {group: [address, ...]}, "tags": {"key:value" or "*": [address, ...]}}`: who an
    answerer group's members are, and who reads questions whose policy names no answerers."""
    EMAIL_CONFIGURATION_SET = "AGENT_WAIT_EMAIL_CONFIGURATION_SET"
    """Optional: the SES configuration set every question email is sent with (bounce and complaint events)."""
    EMAIL_REPLY_TO = "AGENT_WAIT_EMAIL_REPLY_TO"
    """Optional: comma-separated `Reply-To` addresses of the question emails (default: the `From`)."""
    EMAIL_SENDS_TABLE = "AGENT_WAIT_EMAIL_SENDS_TABLE"
    """Optional: the DynamoDB table (partition key `question_id`) that records each question's emails, so a
    redelivered event emails nobody twice."""
    PUSH_KEYS_ARN = "AGENT_WAIT_PUSH_KEYS_ARN"
    """Optional: a Secrets Manager secret holding the VAPID key pair web push is sent with, JSON `{"public_key",
    "private_key"}` (base64url, raw P-256; `agent-wait push keys` makes one). Set with
    `AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE`, the inbox offers "Notify me on this device" and the router and the sweep
    push each question to the subscribed people who may answer it (`agent_wait.channels.push`, docs/phone.md)."""
    PUSH_SUBSCRIPTIONS_TABLE = "AGENT_WAIT_PUSH_SUBSCRIPTIONS_TABLE"
    """With `AGENT_WAIT_PUSH_KEYS_ARN`: the DynamoDB table (partition key `person`, sort key `device`, strings) of
    the inbox's push subscriptions, one per person and device, with the groups their token named."""
    PUSH_SENDS_TABLE = "AGENT_WAIT_PUSH_SENDS_TABLE"
    """With `AGENT_WAIT_PUSH_KEYS_ARN`, the router's and the sweep's: the DynamoDB table (partition key `question_id`;
    TTL on `ttl`) where each push is claimed before it is sent, so a redelivered event pushes nothing twice."""
    PUSH_SUBJECT = "AGENT_WAIT_PUSH_SUBJECT"
    """Optional, with `AGENT_WAIT_PUSH_KEYS_ARN`: the VAPID `sub` claim a push service may contact the operator at,
    `mailto:<address>` or an `https://` URL (RFC 8292). Unset: the answer API's URL."""
    METRIC_TAGS = "AGENT_WAIT_METRIC_TAGS"
    """Optional, the router's: a JSON object from a policy tag key to the values time to answer is drawn for
    (`{"team": ["payments", "support"]}`), at most 3 keys of 10 values. `TimeToAnswerSeconds` is then also emitted
    per outcome and key, a value not listed as `other`, a question without the tag as `none`. Unset: by outcome only."""
    CHECKPOINT_BUCKET = "AGENT_WAIT_CHECKPOINT_BUCKET"
    """Optional: an S3 bucket name; the router's LangGraph checkpoint saver stores a checkpoint (or a step's
    writes) over `AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES` there, so a state past DynamoDB's 400 KB item limit still
    checkpoints. Unset: such a checkpoint fails its thread (dead letter `checkpoint_too_large`)."""
    CHECKPOINT_OFFLOAD_BYTES = "AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES"
    """Optional, with `AGENT_WAIT_CHECKPOINT_BUCKET`: the size in bytes over which the saver stores a checkpoint (or
    a step's writes) in the bucket rather than the table, from 1 to 408576 (default 12288, 12 KB; see
    docs/scaling.md, "Checkpoint offload threshold")."""
    CHECKPOINT_RETENTION = "AGENT_WAIT_CHECKPOINT_RETENTION"
    """Optional, the router's: how long the LangGraph checkpoint saver keeps a thread's checkpoints after it last wrote
    them, whole days as an ISO 8601 duration from `P14D` to `P3650D`, or `never`. Each item gets the checkpoint table's
    TTL (`ttl`) that far ahead and each offloaded object the tag `ttl-days=<days + 1>` the bucket's lifecycle rule
    expires; a thread waiting on an open question (or failed, waiting for its retry) keeps the checkpoint it waits on
    until it moves on (docs/operate.md, "What is kept, and for how long"). Unset: `P30D`."""
    AUDIT_GROUP = "AGENT_WAIT_AUDIT_GROUP"
    """Optional: the group (from the JWT's groups claim) whose members may read the audit trail, `GET /audit`; one
    name, without spaces or commas; unset, the route refuses everyone (403 `audit_not_enabled`)."""
    DECIDED_RETENTION = "AGENT_WAIT_DECIDED_RETENTION"
    """Optional: how long a decided question's row is kept after its decision, an ISO 8601 duration from `P1D` to
    `P3650D`, or `never`: the decision sets the table's TTL attribute (`ttl`) that far ahead, and DynamoDB deletes
    the row some time after (export the audit trail to keep it longer: docs/audit.md). Unset: `P400D`."""
    CHANNEL_RECORD_RETENTION = "AGENT_WAIT_CHANNEL_RECORD_RETENTION"
    """Optional: how long a channel's record of what it sent for a question (Slack posts, emails, Teams cards) is kept
    after its last send, an ISO 8601 duration from `P1D` to `P3650D`, or `never`. Unset: `P90D`."""
    SCHEDULE_GROUP = "AGENT_WAIT_SCHEDULE_GROUP"
    """Optional, with the next two (`AgentWait(precise_deadlines=True)` sets all three): the EventBridge Scheduler
    group where each open question gets one-time schedules at its deadline and next follow-ups, so they happen
    within seconds instead of at the sweep's next minute (docs/host.md, "Precise deadlines")."""
    SCHEDULE_TARGET_ARN = "AGENT_WAIT_SCHEDULE_TARGET_ARN"
    """With `AGENT_WAIT_SCHEDULE_GROUP`: the sweep function's ARN, which each schedule invokes for its question."""
    SCHEDULE_ROLE_ARN = "AGENT_WAIT_SCHEDULE_ROLE_ARN"
    """With `AGENT_WAIT_SCHEDULE_GROUP`: the IAM role Scheduler assumes to invoke the sweep."""
    SCHEDULE_EARLY_WAIT = "AGENT_WAIT_SCHEDULE_EARLY_WAIT_SECONDS"
    """Optional, the sweep's, with `AGENT_WAIT_SCHEDULE_GROUP`: how long a schedule's wake-up that came before its
    question's time (Scheduler fires anywhere in the minute) waits for it, 0 to 60 seconds (default 60). Less costs
    less Lambda time and leaves more to the minute sweep (docs/scaling.md, "Deadline lateness and cost")."""
    AGENT_CARD = "AGENT_WAIT_AGENT_CARD"
    """Optional, the router's and the answer API's (`AgentWait(a2a=...)` sets it): the hosted agent as an A2A v1.0
    agent, a JSON object `{"name": ..., "description": ..., "skills": [{"id", "name", "description", "tags"}]}`.
    Set, the answer API serves its agent card and `POST /a2a`, and the router tells each A2A task's push
    configs of its state changes (docs/a2a.md). Unset: A2A is off."""
    ON_NEW_VERSION = "AGENT_WAIT_ON_NEW_VERSION"
    """Optional, the router's: what resuming a question asked under another version of the agent does when its
    policy does not say (`WaitPolicy(on_new_version=...)`): `resume` (the default) while the waiting node and
    `@wait` function still exist with the same parameters, else fail the thread `version_changed`; `fail` on any
    change (docs/versions.md)."""
    PASSKEY_ORIGIN = "AGENT_WAIT_PASSKEY_ORIGIN"
    """Optional, the answer API's: the inbox's origin, `https://<API domain>` (its host is the WebAuthn relying party
    id). Set, people register passkeys in the inbox and confirm answers to `require_passkey` questions with them
    (docs/proving.md); unset, such questions refuse every answer `passkey_required`."""
    MCP_POLICIES = "AGENT_WAIT_MCP_POLICIES"
    """Optional, the answer API's (`AgentWait(mcp=McpProps(...))` sets it): the named policies the MCP server's
    `ask_person` may ask under, JSON `{"policies": {name: WaitPolicy.to_dict()}, "default": name}`; unset, `POST /mcp`
    and `POST /mcp/iam` answer 404 (docs/any-language.md)."""
