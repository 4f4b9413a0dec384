"""The router's LangGraph checkpoint saver on DynamoDB (extra `langgraph-host`): `TaskAtomicDynamoDBSaver`.

`saver` stores each task's writes as one write; `batch` sends a run's items one `BatchWriteItem` per step;
`notes` keeps the keys of a held thread's latest checkpoint for the note its delivery leaves.
"""

from agent_wait.langgraph.checkpoint.saver import TaskAtomicDynamoDBSaver

__all__ = ("TaskAtomicDynamoDBSaver",)
