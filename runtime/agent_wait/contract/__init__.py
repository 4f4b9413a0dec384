"""The wire: the outbound envelope (`envelope`: `WaitEnvelope`, `Question`, `Transition`), the inbound start, answer
and retry messages (`messages`), and the AWS shapes and `AGENT_WAIT_*` settings the constructs deploy (`schema`).
docs/message-formats.md is the contract these implement. Standard library only."""
