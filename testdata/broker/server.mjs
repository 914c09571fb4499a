#!/usr/bin/env node
// An MCP stdio server for the broker's tests (SPEC 14), written with the TypeScript SDK that
// testdata/interop installs (make deps), so that the broker is held to a real server's framing,
// concurrency and exit. One program, its behaviour chosen by flags:
//
//   --start-ms N      wait N ms before serving (a Node server's start, 0.3 s in the targets)
//   --exit-at-start   write a line to stderr and exit 3 before serving (a provider that cannot start)
//   --exit-if FILE    the same, when FILE exists (one that started once, then cannot)
//   --record FILE     append one JSON line per call event: {"ev":"start"|"end"|"cancelled","tool","arg","pid","t"}
//   --schema-if FILE  when FILE exists at start, echo's input schema has a second (optional)
//                     property (a definition that changed across a restart)
//   --hang-at-start   never serve (start-up timeout)
//   --tools a,b       list only these of the tools below (a turn's family of up to 8 tools is
//                     shown whole, and its tools need no describe before an invoke)
//
// Its tools (all READ in the tests' entries):
//   echo {message}    answers the message, exactly (caller isolation)
//   sleep {ms, message} answers the message after ms milliseconds, other calls meanwhile served
//   hang {}           never answers (call timeouts; a call in flight when something is killed)
//   pid {}            answers this process's pid (which process answered)
//   env {}            fails: writes the whole environment to stderr and answers isError with it
//                     too (a provider that leaks its secrets; the caller must redact them)
import { createRequire } from "node:module";
import { appendFileSync, existsSync } from "node:fs";

const require = createRequire(new URL("../interop/package.json", import.meta.url));
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : undefined;
};

if (flag("--exit-at-start") || (value("--exit-if") && existsSync(value("--exit-if")))) {
  process.stderr.write("broker test server: exiting at start\n");
  process.exit(3);
}

const record = value("--record");
const note = (ev, tool, arg) => {
  if (record) {
    appendFileSync(record, JSON.stringify({ ev, tool, arg, pid: process.pid, t: Date.now() }) + "\n");
  }
};

const text = (s, isError = false) => ({ content: [{ type: "text", text: s }], ...(isError ? { isError: true } : {}) });
const object = (props) => ({ type: "object", properties: props });

const allTools = [
  { name: "echo", description: "Answers its message.", inputSchema: object({ message: { type: "string" } }) },
  { name: "sleep", description: "Answers its message after ms milliseconds.",
    inputSchema: object({ ms: { type: "integer" }, message: { type: "string" } }) },
  { name: "hang", description: "Never answers.", inputSchema: object({}) },
  { name: "pid", description: "Answers the server's process id.", inputSchema: object({}) },
  { name: "env", description: "Fails, saying its environment.", inputSchema: object({}) },
];

if (value("--schema-if") && existsSync(value("--schema-if"))) {
  allTools[0].inputSchema = { type: "object", properties: { message: { type: "string" }, extra: { type: "string" } } };
}
const only = value("--tools")?.split(",");
const tools = only ? allTools.filter((t) => only.includes(t.name)) : allTools;

const server = new Server({ name: "broker-test-server", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const name = req.params.name;
  const a = req.params.arguments ?? {};
  note("start", name, a.message ?? null);
  // notifications/cancelled for this call (the SDK aborts its signal, possibly before this
  // handler runs): recorded, and the call goes on (its answer is dropped by the SDK)
  const cancelled = () => note("cancelled", name, a.message ?? null);
  if (extra.signal.aborted) cancelled();
  else extra.signal.addEventListener("abort", cancelled);
  let out;
  switch (name) {
    case "echo":
      out = text(String(a.message ?? ""));
      break;
    case "sleep":
      await new Promise((r) => setTimeout(r, Number(a.ms ?? 0)));
      out = text(String(a.message ?? ""));
      break;
    case "hang":
      await new Promise(() => {});
      break;
    case "pid":
      out = text(String(process.pid));
      break;
    case "env": {
      const dump = Object.entries(process.env).map(([k, v]) => `${k}=${v}`).join("\n");
      process.stderr.write(dump + "\n");
      out = text("environment:\n" + dump, true);
      break;
    }
    default:
      out = text(`no tool ${name}`, true);
  }
  note("end", name, a.message ?? null);
  return out;
});

if (flag("--hang-at-start")) {
  setInterval(() => {}, 1 << 30);
} else {
  const start = Number(value("--start-ms") ?? 0);
  if (start > 0) {
    // Nothing is read from stdin until the transport connects, as while a real server loads.
    await new Promise((r) => setTimeout(r, start));
  }
  await server.connect(new StdioServerTransport());
}
