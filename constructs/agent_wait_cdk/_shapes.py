"""The resource shapes and setting names the runtime reads, restated for the constructs.

The constructs never import `agent_wait` (the runtime is bundled for Lambda, not installed beside CDK), so
the names live here a second time. `tests/cdk/test_schema_match.py` compares every one of them with
`agent_wait.schema`, so the two cannot drift apart.
"""

from __future__ import annotations

ROUTER_HANDLER = "agent_wait.host.router.handler"
"""The router's Lambda entry point: an SQS FIFO event in, a partial batch response out."""
SWEEP_HANDLER = "agent_wait.host.sweep.handler"
"""The sweep's Lambda entry point: a scheduled event in."""
API_HANDLER = "agent_wait.host.api.handler"
"""The answer API's Lambda entry point: an API Gateway HTTP API event (payload format 2.0) in."""

QUESTION_PARTITION_KEY = "pk"
QUESTION_SORT_KEY = "sk"
QUESTION_TTL_ATTRIBUTE = "ttl"
STATUS_INDEX_NAME = "by_status"
"""A status's questions by deadline; the partition key is `<status>#<shard>`. Keys and `tags` only."""
RENAMED_STATUS_INDEX_NAME = "by_status_shard"
"""The same index (keys, projection) under the name it had before it took `by_status`, for tables deployed with it."""
UNSHARDED_STATUS_INDEX = "by_status_unsharded"
"""The upgrade context's name for the unsharded status index of a table from before the shards: it is deployed as
`by_status` on (`status`, `expires_at`), so it cannot be listed beside the current `by_status`."""
STATUS_INDEX_PARTITION_KEY = "status_shard"
STATUS_INDEX_SORT_KEY = "expires_at"
STATUS_INDEX_INCLUDE = ("tags",)
"""Projected beside the keys: the listing's tag filter runs in the index."""
DUE_INDEX_NAME = "by_due_shard"
"""Sparse, keys only: an open question carries `due = due#<shard>` while something is due at `due_at` (an
announcement retry, a reminder, an escalation step, its deadline); the sweep reads only what is due."""
DUE_INDEX_PARTITION_KEY = "due"
DUE_INDEX_SORT_KEY = "due_at"
OPEN_AGE_INDEX_NAME = "open_by_age_shard"
"""Sparse, keys only: only an open question carries `open_since = open#<shard>`; the sweep reads the oldest for
its alarm metric."""
OPEN_AGE_INDEX_PARTITION_KEY = "open_since"
OPEN_AGE_INDEX_SORT_KEY = "asked_at"
LEGACY_INDEXES = {
    STATUS_INDEX_NAME: ("by_status", "status", "expires_at"),
    DUE_INDEX_NAME: ("by_due", "due", "due_at"),
    OPEN_AGE_INDEX_NAME: ("open_by_age", "open_since", "asked_at"),
}
"""Each sharded index's predecessor from before the shards (name, partition key, sort key; every attribute
projected), for upgrades. The unsharded `by_status` shares the current status index's name."""
QUESTION_INDEXES_CONTEXT = "agent-wait:question-table-indexes"
"""CDK context: the comma-separated index names to deploy on the question table, current and legacy, while an
existing table is upgraded one index per deploy (docs/constructs.md, "Upgrading the question table's indexes")."""
QUESTION_INDEX_NAME = "by_question"
"""Keys only: finds a question's thread from its id alone (the answer API, a signed link); the item is then
read by its key."""
QUESTION_INDEX_PARTITION_KEY = "question_id"
QUESTION_INDEX_SORT_KEY = "pk"

CHECKPOINT_PARTITION_KEY = "PK"
CHECKPOINT_SORT_KEY = "SK"
CHECKPOINT_TTL_ATTRIBUTE = "ttl"

ENTRY_QUEUE_MAX_RECEIVE_COUNT = 5
"""Receives before SQS moves a message to the dead-letter queue."""

ENV_GRAPH = "AGENT_WAIT_GRAPH"
ENV_TABLE = "AGENT_WAIT_TABLE"
ENV_CHECKPOINT_TABLE = "AGENT_WAIT_CHECKPOINT_TABLE"
ENV_QUEUE_URL = "AGENT_WAIT_QUEUE_URL"
ENV_DLQ_URL = "AGENT_WAIT_DLQ_URL"
ENV_TOPIC_ARN = "AGENT_WAIT_TOPIC_ARN"
ENV_BUS_NAME = "AGENT_WAIT_BUS_NAME"
ENV_WEBHOOK_URL = "AGENT_WAIT_WEBHOOK_URL"
ENV_WEBHOOK_URL_SECRET_ARN = "AGENT_WAIT_WEBHOOK_URL_SECRET_ARN"
"""The Secrets Manager secret whose value is the webhook URL: a webhook URL carries a token."""
ENV_SWEEP_LIMIT = "AGENT_WAIT_SWEEP_LIMIT"
ENV_WEBHOOK_SECRET_ARN = "AGENT_WAIT_WEBHOOK_SECRET_ARN"
ENV_LEASE_SECONDS = "AGENT_WAIT_LEASE_SECONDS"
ENV_MAX_RECEIVE_COUNT = "AGENT_WAIT_MAX_RECEIVE_COUNT"
ENV_TRUSTED_SENDERS = "AGENT_WAIT_TRUSTED_SENDERS"
ENV_START_SENDERS = "AGENT_WAIT_START_SENDERS"
ENV_ANSWER_SENDERS = "AGENT_WAIT_ANSWER_SENDERS"
ENV_API_URL = "AGENT_WAIT_API_URL"
ENV_LINK_KEYS_ARN = "AGENT_WAIT_LINK_KEYS_ARN"
ENV_LINK_ANNOUNCERS = "AGENT_WAIT_LINK_ANNOUNCERS"
ENV_GROUPS_CLAIM = "AGENT_WAIT_GROUPS_CLAIM"
ENV_AUDIT_GROUP = "AGENT_WAIT_AUDIT_GROUP"
"""The answer API's only: the group whose members may read `GET /audit`."""
ENV_DECIDED_RETENTION = "AGENT_WAIT_DECIDED_RETENTION"
"""Not set by the constructs (decided rows are kept); set it on the router and the answer API to expire them."""
ENV_INDEX_SHARDS = "AGENT_WAIT_INDEX_SHARDS"
"""Not set by the constructs (the runtime's default, 8, applies); set it on every function to change it."""
ENV_SLACK_BOT_TOKEN_ARN = "AGENT_WAIT_SLACK_BOT_TOKEN_ARN"
"""The router's, the sweep's and the answer API's: the secret holding the Slack app's bot token."""
ENV_SLACK_SIGNING_SECRET_ARN = "AGENT_WAIT_SLACK_SIGNING_SECRET_ARN"
"""The answer API's only: the secret holding the Slack app's signing secret."""
ENV_SLACK_CHANNELS = "AGENT_WAIT_SLACK_CHANNELS"
"""The router's and the sweep's: JSON, a policy tag `key:value` (or `*`) to a Slack channel id."""
ENV_SLACK_GROUPS = "AGENT_WAIT_SLACK_GROUPS"
"""JSON, an answerer group to a Slack user group id; the router's, the sweep's and the answer API's."""
ENV_SLACK_MESSAGES_TABLE = "AGENT_WAIT_SLACK_MESSAGES_TABLE"
"""The router's and the sweep's: the table of each question's Slack messages."""
ENV_SLACK_API_URL = "AGENT_WAIT_SLACK_API_URL"
"""Not set by the constructs (Slack's own Web API); a local fake sets it in tests and `agent-wait dev`."""
ENV_CHECKPOINT_BUCKET = "AGENT_WAIT_CHECKPOINT_BUCKET"
"""The router's only: the S3 bucket its checkpoint saver offloads checkpoints over 12 KB to."""
ENV_CHECKPOINT_OFFLOAD_BYTES = "AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES"
"""Not set by the constructs (the saver's default applies); the router's offload threshold, set by hand if at all."""
ENV_SIGN_IN_URL = "AGENT_WAIT_SIGN_IN_URL"
ENV_SIGN_IN_TOKEN_URL = "AGENT_WAIT_SIGN_IN_TOKEN_URL"
ENV_SIGN_IN_CLIENT_ID = "AGENT_WAIT_SIGN_IN_CLIENT_ID"
ENV_SIGN_IN_SCOPES = "AGENT_WAIT_SIGN_IN_SCOPES"
"""The inbox page's OIDC sign-in; not set by the constructs yet (`AnswerApi` routes no `/inbox`)."""

SERVICE_NAME = "agent-wait"
"""`POWERTOOLS_SERVICE_NAME`; Powertools Metrics adds it to every metric as the `service` dimension."""
METRICS_NAMESPACE = "AgentWait"
"""`POWERTOOLS_METRICS_NAMESPACE`: the CloudWatch namespace of every metric the functions emit."""
OLDEST_OPEN_QUESTION_METRIC = "OldestOpenQuestionAgeSeconds"
"""Emitted by the sweep on every run: seconds since the oldest still-open question was asked (0 when none)."""
ROUTER_ERRORS_METRIC = "RouterErrors"
"""Emitted by the router for each record it hands back to SQS (also per `reason`, the error type)."""
SWEEP_ERRORS_METRIC = "SweepErrors"
"""Emitted by the sweep for each failed step or refused deadline answer (also per `reason`: the step, or `send`)."""
TRACE_DISABLED_VARIABLE = "POWERTOOLS_TRACE_DISABLED"
"""Powertools' switch for its `Tracer`; `true` unless the functions are traced with X-Ray (`Tracing.ACTIVE`)."""
LEASE_MARGIN_SECONDS = 60
"""Added to the router's timeout for `AGENT_WAIT_LEASE_SECONDS`: a live invocation never outlives its lease."""
