// The official TypeScript MCP SDK (@modelcontextprotocol/client, from npm) against agent-wait's MCP server.
//
//   node tests/local/mcp_client.mjs <mcp url> <bearer token> tools
//   node tests/local/mcp_client.mjs <mcp url> <bearer token> calltool '<arguments JSON>'   (Client.callTool, as is)
//   node tests/local/mcp_client.mjs <mcp url> <bearer token> ask '<arguments JSON>'
//   node tests/local/mcp_client.mjs <mcp url> <bearer token> get <task id>
//   node tests/local/mcp_client.mjs <mcp url> <bearer token> cancel <task id>
//
// Prints one JSON line: the result, or {"error": {...}}. The SDK's Client negotiates MCP 2026-07-28 and lists the
// tools. Client 2.4.0 does not yet claim the tasks extension's results (`resultType: "task"`, SEP-2663): its
// callTool refuses them (UNSUPPORTED_RESULT_TYPE), and tasks/get and tasks/cancel are refused on the 2026 era. So the
// tool call and the task methods go through the SDK's own StreamableHTTPClientTransport, with the request `_meta`
// envelope the Client would attach; the transport derives the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers from it. See docs/any-language.md.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, command, argument] = process.argv.slice(2);
const TASKS = "io.modelcontextprotocol/tasks";
const headers = { Authorization: `Bearer ${token}` };
const clientInfo = { name: "agent-wait-ts-test", version: "1.0.0" };

function envelope() {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": clientInfo,
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
  };
}

async function rpc(method, params) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const id = 1;
  const reply = new Promise((resolve, reject) => {
    transport.onmessage = (message) => {
      if (message.id === id) resolve(message);
    };
    transport.onerror = reject;
  });
  await transport.start();
  await transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope() } });
  const message = await reply;
  await transport.close();
  return message.error ? { error: message.error } : message.result;
}

async function tools() {
  const client = new Client(clientInfo, {
    capabilities: { extensions: { [TASKS]: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  const listed = await client.listTools();
  const protocolVersion = client.getNegotiatedProtocolVersion();
  await client.close();
  return { protocolVersion, tools: listed.tools };
}

async function callTool(args) {
  const client = new Client(clientInfo, {
    capabilities: { extensions: { [TASKS]: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    return { returned: await client.callTool({ name: "ask_person", arguments: args }) };
  } catch (error) {
    return { error: { code: error.code ?? null, data: error.data ?? null } };
  } finally {
    await client.close();
  }
}

let result;
if (command === "tools") result = await tools();
else if (command === "calltool") result = await callTool(JSON.parse(argument));
else if (command === "ask") result = await rpc("tools/call", { name: "ask_person", arguments: JSON.parse(argument) });
else if (command === "get") result = await rpc("tasks/get", { taskId: argument });
else if (command === "cancel") result = await rpc("tasks/cancel", { taskId: argument });
else throw new Error(`unknown command ${command}`);
process.stdout.write(JSON.stringify(result) + "\n");
