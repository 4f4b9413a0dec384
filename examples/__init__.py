"""Examples built on agent-wait. `refund_agent` ships in the wheel as `agent_wait.examples.refund_agent`."""
