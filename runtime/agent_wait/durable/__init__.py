"""The binding for AWS Lambda durable functions: ask a person from a durable handler, through agent-wait.

Needs the `durable` extra (`pip install 'agent-wait[durable]'`). In a handler:

    from aws_durable_execution_sdk_python import DurableContext, durable_execution

    from agent_wait import WaitPolicy
    from agent_wait.aws import DynamoDbLedger, SnsAnnounce
    from agent_wait.durable import ask

    LEDGER = DynamoDbLedger("agent-wait-questions")
    ANNOUNCE = [SnsAnnounce("arn:aws:sns:...:agent-wait-announce")]
    FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"})

    @durable_execution
    def handler(event, context: DurableContext):
        answer = ask(context, {"refund": event["order_id"]}, FINANCE, ledger=LEDGER, announce=ANNOUNCE)
        ...

`ask` waits with `context.wait_for_callback`: while it waits the function is not running and costs nothing.
The question is decided by the same engine as every other (any door; who may answer, quorum, deadline default),
and the router completes the callback with the decision (`agent_wait.asking.callbacks`, `docs/durable-functions.md`).
"""

from agent_wait.errors import require_extra

require_extra("agent_wait.durable", "aws_durable_execution_sdk_python", "durable")

from agent_wait.durable._ask import (  # noqa: E402  (after the extra check, on purpose)
    CALLBACK_MARGIN,
    LONGEST_CALLBACK,
    ask,
    callback_timeout,
    record_question,
)

__all__ = ("CALLBACK_MARGIN", "LONGEST_CALLBACK", "ask", "callback_timeout", "record_question")
