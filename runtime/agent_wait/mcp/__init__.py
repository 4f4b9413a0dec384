"""agent-wait as an MCP server: the `ask_person` tool, answered as a Task (MCP 2026-07-28, SEP-2663 tasks extension).

Any MCP client (TypeScript, Python, Go, an IDE) asks a person durably: `tools/call ask_person` records and announces
the question like every other (inbox, Slack, email, deadlines) and returns a task; `tasks/get` reads the question's
row (`working` while open, `completed` with the answer or the deadline's default, `cancelled`, `failed`), and
`tasks/cancel` cancels the question through the one decision path. Stateless: one JSON-RPC request per Lambda
invocation, served by the `mcp` SDK (`agent_wait.mcp.server`) behind the answer API's `POST /mcp` (JWT) and
`POST /mcp/iam` (SigV4) routes. docs/any-language.md shows a client in TypeScript and in Python.

Kept light on purpose (no imports here): `agent_wait.mcp.ids`, `.task_state` and `.policies` are standard library;
`.tasks`, `.server` and `.http` need the `mcp` extra (`pip install 'agent-wait[mcp]'`).
"""
