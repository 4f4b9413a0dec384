"""A hosted agent called over A2A v1.0 (docs/a2a.md): its tasks on the question table, their states read from the
ledger, the SDK's request handler and JSON-RPC dispatcher behind the answer API, and push notifications.

Importing this package imports nothing of the SDK: `agent` (the card's fields) is read by the settings of every
deployment; the other modules need the `a2a` extra and are imported only when A2A is on (`AGENT_WAIT_AGENT_CARD`).

- `agent`: `A2aAgent`, the card's fields, from `AGENT_WAIT_AGENT_CARD`;
- `tasks`: `DynamoDbTaskStore`, one item per task beside its thread's questions;
- `states`: a task's A2A state from its thread's questions and failure (`task_view`, `as_task`);
- `card`, `parts`, `handler`, `http`: the answer API's side (the card, reading messages, the `RequestHandler`, one
  JSON-RPC request through the SDK's dispatcher);
- `push`, `follow`: telling push configs of each change once; the router's side.
"""
