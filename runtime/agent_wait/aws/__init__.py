"""agent-wait on AWS: announcers for SNS, SQS, EventBridge and a DynamoDB row, and the DynamoDB question ledger.
Every AWS failure leaves it as an error of `agent_wait.errors`.

Needs the `aws` extra (`pip install 'agent-wait[aws]'`); importing this package without boto3 raises
`MissingExtraError` naming it.

Example:
    >>> from agent_wait.aws import SqsAnnounce
    >>> SqsAnnounce.name
    'sqs'
"""

from agent_wait.errors import require_extra

require_extra("agent_wait.aws", "boto3", "aws")

from agent_wait.aws.dynamodb import DynamoDbAnnounce  # noqa: E402  (after the extra check, on purpose)
from agent_wait.aws.eventbridge import EventBridgeAnnounce  # noqa: E402
from agent_wait.aws.ledger import DynamoDbLedger  # noqa: E402
from agent_wait.aws.sns import SnsAnnounce  # noqa: E402
from agent_wait.aws.sqs import SqsAnnounce  # noqa: E402

__all__ = (
    "DynamoDbAnnounce",
    "DynamoDbLedger",
    "EventBridgeAnnounce",
    "SnsAnnounce",
    "SqsAnnounce",
)
