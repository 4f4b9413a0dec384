"""IAM action lists, one per intent, kept in one place (as aws-dynamodb's `perms.ts` does).

No list holds a wildcard. Each names the calls its reader makes and nothing more; a function that needs
another call gets a new named list here, not a broader one.
"""

from __future__ import annotations

QUESTION_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
"""Read questions: one by key, several by key, or a thread's / a status's questions."""

QUESTION_ROUTER = (
    *QUESTION_READ,
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:ConditionCheckItem",
)
"""The router opens questions (conditional put) and decides them (conditional update); transactions need
the same per-item actions, so there is no separate transaction action to grant."""

QUESTION_SWEEP = (*QUESTION_READ, "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem")
"""The sweep queries `by_due_shard` for what is due (announcement retries, reminders, escalation steps,
deadlines), `by_status` for decisions to hand over and `open_by_age_shard` for the oldest open question,
reads those rows by key (`BatchGetItem`: the indexes hold keys only), and records each re-announcement,
reminder and escalation step with a conditional update."""

QUESTION_API_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
"""The answer API reads one question with its thread's item (`BatchGetItem`, after finding its thread in
`by_question`) and lists a status's questions a page at a time: the page's keys from `by_status`, then the rows by
key (`BatchGetItem`); it reads standing grants from their one partition (`GetItem`, `Query`)."""
QUESTION_API_ASK = ("dynamodb:PutItem",)
"""Only with `AgentWait(mcp=...)`: the MCP server's `ask_person` opens a question's row (`Ledger.open`, a put
conditioned on no row with its key, so it never replaces one), as the router does for a graph's question."""
QUESTION_API_DECIDE = ("dynamodb:UpdateItem",)
"""The answer API decides a question at once and hands it over on its thread's item: two conditional updates in one
`TransactWriteItems` (IAM authorizes each item's own action, `UpdateItem`), on the table only. An approval that
grants makes the grant with one conditional update that creates its item, and a revoke is one more: never `PutItem`,
which could replace a question's row."""

CHECKPOINT_READ_WRITE = (
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:DeleteItem",
    "dynamodb:UpdateItem",
)
"""What `langgraph_checkpoint_aws.DynamoDBSaver` calls: get/query/batch-get to load, put/batch-write to
save, batch-write and delete to drop a thread; and the router's saver updates an item's TTL to hold the checkpoint a
thread waits on, or to let it go."""

CHECKPOINT_OBJECTS = (
    "s3:GetObject",
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:PutObjectTagging",
    "s3:DeleteObjectTagging",
)
"""What `DynamoDBSaver` calls on the checkpoint bucket's objects: get to load, put (`If-None-Match` for a step's
writes) to save, delete objects (`DeleteObjects` needs `s3:DeleteObject`) to drop a thread. The router's saver writes
each object with its retention tag (`PutObject` with tags needs `s3:PutObjectTagging`), takes the tag off to hold one
a thread waits on (`s3:DeleteObjectTagging`), and copies it onto itself with the tag to let it go (get, put, tag)."""
CHECKPOINT_BUCKET_LIST = ("s3:ListBucket",)
"""On the checkpoint bucket itself: so a missing object is `NoSuchKey`, not `AccessDenied` (the saver skips the
first, a payload that never arrived, and fails on the second)."""

QUESTION_DURABLE_ASK = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem")
"""A durable function asking (`agent_wait.durable.ask`): its submitter puts the question (a conditional put that
returns the row it finds), and marks it back unannounced when its announcement failed."""
DURABLE_CALLBACK = ("lambda:SendDurableExecutionCallbackSuccess", "lambda:GetDurableExecutionHistory")
"""The router completes a durable function's callback with the decision, and reads the execution's history when
Lambda refuses a completion as closed (one the router made before it died counts as made)."""

# On each channel's record of what it sent (`ChannelRecordTable`, `_grants.grant_channel_record`): what that
# channel's runtime calls, no more.
SLACK_MESSAGES = ("dynamodb:GetItem", "dynamodb:UpdateItem")
"""What the router and the sweep call on the Slack messages table: read a question's posts, claim a post and
record its `ts` with conditional updates (`agent_wait.channels.slack.messages.DynamoDbSlackMessages`)."""
EMAIL_SENDS = ("dynamodb:GetItem", "dynamodb:UpdateItem")
"""What the router and the sweep call on the email sends table: read a question's emails, claim an email and
record SES's message id with conditional updates (`agent_wait.channels.email.sends.DynamoDbEmailSends`)."""
TEAMS_SENDS = ("dynamodb:UpdateItem",)
"""What the router and the sweep call on the Teams sends table: claim a card and mark it accepted
(`agent_wait.channels.sends.DynamoDbSends`)."""
PUSH_SENDS = ("dynamodb:UpdateItem",)
"""What the router and the sweep call on the push sends table: claim a push and mark it sent
(`agent_wait.channels.sends.DynamoDbSends`)."""
PUSH_SUBSCRIPTIONS_READ = ("dynamodb:Scan", "dynamodb:DeleteItem")
"""What the router and the sweep call on the push subscriptions table: read every subscription to find who may answer,
and remove one its push service says is gone (`agent_wait.channels.push.DynamoDbPushSubscriptions`)."""
PUSH_SUBSCRIPTIONS_KEEP = ("dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query")
"""What the answer API calls on the push subscriptions table: keep a person's subscription, remove it, read theirs."""
SES_SEND = ("ses:SendEmail", "ses:SendRawEmail")
"""Send a question's email (SES v2 `SendEmail`, raw content; `SendRawEmail` for v1 clients), on the identity and
the configuration set only."""

SQS_SEND = ("sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl")
"""Send a start or an answer (or, for the router, a dead letter); the same list `aws-sqs` grants."""
SQS_SEND_ONLY = ("sqs:SendMessage",)
"""The answer API hands each decision's resume to the entry queue by its URL: no attribute or URL look-ups."""
SNS_PUBLISH = ("sns:Publish",)
EVENTS_PUT = ("events:PutEvents",)

KMS_READ = ("kms:Decrypt", "kms:DescribeKey")
"""With a customer managed key: read what it protects."""
KMS_READ_WRITE = (
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
)
"""With a customer managed table key: read and write items. The `aws-dynamodb` grants say the same with
`kms:ReEncrypt*` and `kms:GenerateDataKey*`; spelled out here so no action holds a wildcard."""
KMS_SEND = ("kms:GenerateDataKey", "kms:Decrypt")
"""With a customer managed queue or topic key: what SQS and SNS need from a producer."""
SECRET_READ = ("secretsmanager:GetSecretValue",)
"""Read the answer-link keys: the value only (no `DescribeSecret`, which `grant_read` adds)."""
KMS_DECRYPT = ("kms:Decrypt",)
"""With a customer managed secret key: what Secrets Manager needs from a reader."""

SCHEDULES_MANAGE = ("scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule")
"""Precise deadlines: the router, the sweep and the answer API put a question's one-time schedules (create, or
update one of that name) and delete them at its decision, in the stack's schedule group only."""
PASS_SCHEDULER_ROLE = ("iam:PassRole",)
"""Naming the role Scheduler assumes on a schedule is passing it: allowed for that role, to Scheduler only."""
SCHEDULER_INVOKE = ("lambda:InvokeFunction",)
"""The role Scheduler assumes invokes the sweep function, and nothing else."""
