"""The wire: the outbound envelope (`envelope`: `WaitEnvelope`, `Question`, `Transition`), the inbound start, answer
and retry messages (`messages`), the AWS shapes the constructs deploy (`schema`) and the `AGENT_WAIT_*` settings they
set (`settings`).
docs/message-formats.md is the contract these implement. Standard library only."""
