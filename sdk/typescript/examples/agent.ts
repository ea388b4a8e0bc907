// An agent in TypeScript: it dials the board's link (one bidi stream over
// HTTP/2, with an agent token), says hello for its flow, and asks the board
// for the approval its flow's approval node needs before the operation may
// go ahead. It prints the decision when a person on the board makes it, and
// exits 0.
//
//   SYMPHONIX_BOARD_URL=http://127.0.0.1:8080 SYMPHONIX_AGENT_TOKEN=<agent token> \
//     node examples/dist/agent.js
//
// Environment:
//   SYMPHONIX_BOARD_URL    the board, http:// (h2c) or https://; required
//   SYMPHONIX_AGENT_TOKEN  an agent token minted for the flow's name
//                          (`board token agent --name ts-refund-desk`); required
//   SYMPHONIX_FLOW         the flow.json to speak for; default examples/flow.json
//   SYMPHONIX_INPUT        the run's values, a JSON object; default an order to refund
//   SYMPHONIX_RUN          the run's id; default a random one
//   SYMPHONIX_TRANSPORT    "connect" (the default) or "grpc"
//
// It does not run the flow: it stands for the engine at the moment a node
// with an approval is reached, and does what the Go agent does there. What
// it shows and the case for it are taken from the run's values the way the
// engine takes them, so its digest is the one the Go agent would send.

import { readFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";

import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationMs, timestampNow } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import {
  AgentLinkService,
  type ApprovalDecision,
  ApprovalState,
  approvalDigest,
  bearer,
  buildOf,
  LinkErrorCode,
  type LinkRequestSchema,
  Outbox,
  protocol,
  Ruling,
  Say,
  stillTheSameThing,
} from "@symphonix/board-sdk";

type Request = MessageInitShape<typeof LinkRequestSchema>;

// Flow is the part of a flow.json this agent reads.
interface Flow {
  name?: string;
  description?: string;
  requires?: { mcp?: Record<string, { tools?: { name: string }[] }> };
  nodes?: { id: string; approval?: { ask?: string; show?: string[]; why?: string } }[];
}

const defaultInput = {
  order_id: "A-1042",
  amount: 5000,
  currency: "EUR",
  reason: "The customer was charged twice for order A-1042.",
};

// welcomeWithin is how long the agent waits for the board's welcome.
const welcomeWithin = 30_000;

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(`${name}: required`);
  }
  return v;
}

function transport(token: string, pingMs: number): Transport {
  const options = {
    baseUrl: env("SYMPHONIX_BOARD_URL"),
    httpVersion: "2" as const,
    interceptors: [bearer(token)],
    // HTTP/2 PINGs below the application's own: a half-open connection is
    // found even while no message is due.
    pingIntervalMs: pingMs,
    pingTimeoutMs: pingMs,
    readMaxBytes: 1 << 20,
  };
  switch (process.env.SYMPHONIX_TRANSPORT ?? "connect") {
    case "connect":
      return createConnectTransport(options);
    case "grpc":
      return createGrpcTransport(options);
    default:
      throw new Error(`SYMPHONIX_TRANSPORT: want "connect" or "grpc", not ${JSON.stringify(process.env.SYMPHONIX_TRANSPORT)}`);
  }
}

// lookup reads a channel, or a field of one ("order.amount"), from the run's
// values; what is not there is null, as the engine shows it.
function lookup(values: Record<string, unknown>, path: string): unknown {
  let v: unknown = values;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object" || !(part in v)) {
      return null;
    }
    v = (v as Record<string, unknown>)[part];
  }
  return v ?? null;
}

// accountOf is the case for saying yes, read from the channel the approval's
// why names: a string trimmed, lines of strings joined; anything else is "".
function accountOf(v: unknown): string {
  if (typeof v === "string") {
    return v.trim();
  }
  if (Array.isArray(v) && v.every((e) => typeof e === "string")) {
    return v.join("\n").trim();
  }
  return "";
}

function render(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([^}\s]+)\s*\}\}/g, (_, path: string) => {
    const v = lookup(values, path);
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

function sayOf(s: Say): string {
  // A say this agent does not know is a no.
  return (Say[s] ?? "NO").toLowerCase();
}

function describe(d: ApprovalDecision): string {
  return `decision ${d.approvalId}: ${sayOf(d.say)} by ${d.who.join(", ") || "-"} reason=${JSON.stringify(d.reason)} digest=${d.digest}`;
}

async function main(): Promise<number> {
  const flowPath = process.env.SYMPHONIX_FLOW ?? new URL("../flow.json", import.meta.url).pathname;
  const flowText = await readFile(flowPath, "utf8");
  const flow = JSON.parse(flowText) as Flow;
  const name = flow.name ?? "";
  if (name === "") {
    throw new Error(`${flowPath}: name: required`);
  }
  const tools = Object.entries(flow.requires?.mcp ?? {})
    .flatMap(([server, decl]) => (decl.tools ?? []).map((t) => `${server}.${t.name}`))
    .sort();
  const build = await buildOf(flowText);

  const node = flow.nodes?.find((n) => n.approval !== undefined);
  if (node?.approval === undefined) {
    throw new Error(`${flowPath}: nodes: none has an approval`);
  }
  const input = JSON.parse(process.env.SYMPHONIX_INPUT ?? JSON.stringify(defaultInput)) as unknown;
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw new Error("SYMPHONIX_INPUT: want a JSON object");
  }
  const values = input as Record<string, unknown>;
  const show: Record<string, unknown> = {};
  for (const ch of node.approval.show ?? []) {
    show[ch] = lookup(values, ch);
  }
  const account = node.approval.why ? accountOf(lookup(values, node.approval.why)) : "";
  // Taken once, when the agent asks, and kept: the decision must carry it.
  const digest = await approvalDigest(show, account);
  const run = process.env.SYMPHONIX_RUN ?? randomUUID();

  const out = new Outbox<Request>();
  out.push({
    kind: {
      case: "hello",
      // It pings, raises and waits for decisions: none of the capabilities.
      value: { name, protocol, capabilities: [], build, tools, description: flow.description ?? "" },
    },
  });
  console.log(`agent ${name}: build ${build}`);

  const abort = new AbortController();
  let pingMs = 15_000;
  let pongWithin = 10_000;
  let seq = 0n;
  let awaiting: bigint | undefined;
  let pingTimer: NodeJS.Timeout | undefined;
  let pongDeadline: NodeJS.Timeout | undefined;
  const welcomeDeadline = setTimeout(() => abort.abort(new Error("no welcome in time")), welcomeWithin);

  // How the link ended, when it ended on purpose.
  let ended: "decided" | "not governed" | "interrupted" | undefined;
  // leave closes the agent's side of the stream, its goodbye: the board
  // records it offline at once and ends the stream. Nothing is sent after.
  const leave = (why: NonNullable<typeof ended>): void => {
    ended ??= why;
    clearInterval(pingTimer);
    clearTimeout(pongDeadline);
    out.close();
  };
  const send = (msg: Request): void => {
    if (ended === undefined) out.push(msg);
  };
  const stop = (signal: string) => {
    console.log(`agent ${name}: ${signal}, leaving`);
    leave("interrupted");
  };
  process.once("SIGINT", () => stop("interrupted"));
  process.once("SIGTERM", () => stop("terminated"));

  let approvalId = "";
  let decided: ApprovalDecision | undefined;
  const requestIds = { whoDecides: "who-1", raise: "raise-1" };
  const done = (d: ApprovalDecision): void => {
    if (!stillTheSameThing(d.digest, digest)) {
      // The decision belongs to another operation than the one held.
      throw new Error(`${describe(d)}: refused, it is about another operation than ${digest}`);
    }
    decided = d;
    console.log(describe(d));
    leave("decided");
  };

  const client = createClient(AgentLinkService, transport(env("SYMPHONIX_AGENT_TOKEN"), pingMs));
  try {
    for await (const res of client.link(out, { signal: abort.signal })) {
      const k = res.kind;
      switch (k.case) {
        case "welcome": {
          clearTimeout(welcomeDeadline);
          const w = k.value;
          if (w.pingInterval) pingMs = durationMs(w.pingInterval);
          if (w.pingTimeout) pongWithin = durationMs(w.pingTimeout);
          console.log(`linked: session ${w.session}, protocol ${w.protocol}, ping every ${pingMs} ms`);
          pingTimer = setInterval(() => {
            if (ended !== undefined || awaiting !== undefined) return; // leaving; or the one in flight decides
            awaiting = ++seq;
            send({ kind: { case: "ping", value: { seq: awaiting, sendTime: timestampNow() } } });
            pongDeadline = setTimeout(() => abort.abort(new Error(`no pong within ${pongWithin} ms`)), pongWithin);
          }, pingMs);
          // Is this approval governed? Only the board's explicit "not
          // governed" would let the chat decide; anything else is wait.
          send({ kind: { case: "whoDecides", value: { requestId: requestIds.whoDecides, node: node.id } } });
          break;
        }
        case "switches":
          console.log(`switches: on [${k.value.on.join(", ")}] spoken=${k.value.spoken}`);
          break;
        case "ping":
          // The board's ping: answer at once, echoing it.
          send({ kind: { case: "pong", value: { seq: k.value.seq, sendTime: k.value.sendTime } } });
          console.log(`ping ${k.value.seq} from the board: answered`);
          break;
        case "pong":
          if (k.value.seq === awaiting) {
            clearTimeout(pongDeadline);
            awaiting = undefined;
            console.log(`pong ${k.value.seq}`);
          }
          break;
        case "whoDecidesAnswer": {
          const a = k.value;
          if (a.requestId !== requestIds.whoDecides) break;
          console.log(`who decides ${node.id}: ${Ruling[a.ruling] ?? a.ruling}${a.ruleId ? ` (rule ${a.ruleId})` : ""}`);
          if (a.ruling === Ruling.NOT_GOVERNED) {
            console.log("not governed: the chat decides it; nothing to ask the board");
            leave("not governed");
            break;
          }
          send({
            kind: {
              case: "raise",
              value: {
                requestId: requestIds.raise,
                run,
                thread: `thread-${run}`,
                node: node.id,
                ask: render(node.approval.ask ?? "", values),
                show: JSON.stringify(show),
                account,
                digest,
              },
            },
          });
          break;
        }
        case "raised": {
          const r = k.value;
          if (r.requestId !== requestIds.raise) break;
          approvalId = r.approvalId;
          console.log(`raised ${r.approvalId}: ${(ApprovalState[r.state] ?? `state ${r.state}`).toLowerCase()} digest=${digest}`);
          if (r.decision !== undefined && r.state !== ApprovalState.PENDING) {
            done(r.decision); // decided before: raising again returns it
          }
          break;
        }
        case "decision":
          if (k.value.approvalId !== approvalId) {
            console.log(`decision for ${k.value.approvalId}, not this run's approval: ignored`);
            break;
          }
          if (decided === undefined) done(k.value);
          break;
        case "error": {
          const e = k.value;
          const code = LinkErrorCode[e.code] ?? "INTERNAL";
          throw new Error(`the board refused ${e.requestId || "a report"}: ${code.toLowerCase()}: ${e.message}`);
        }
        default:
          // A kind this agent does not know: ignored.
          break;
      }
    }
  } catch (err) {
    if (abort.signal.aborted && abort.signal.reason instanceof Error) {
      throw abort.signal.reason;
    }
    throw err;
  } finally {
    clearTimeout(welcomeDeadline);
    clearInterval(pingTimer);
    clearTimeout(pongDeadline);
    out.close();
  }
  switch (ended) {
    case "decided":
    case "not governed":
      return 0;
    case "interrupted":
      return 130;
    default:
      console.error("the board ended the link before a decision");
      return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConnectError) {
      console.error(`board: ${Code[err.code]}: ${err.rawMessage}`);
    } else {
      console.error(err instanceof Error ? err.message : err);
    }
    process.exit(1);
  },
);
