// An operator's script: list the fleet, list what waits for a decision, and
// decide an approval, over the Connect protocol or gRPC (both on HTTP/2).
//
//   SYMPHONIX_BOARD_URL=http://127.0.0.1:8080 SYMPHONIX_TOKEN=<operator token> \
//     node examples/dist/operator.js agents
//   ... node examples/dist/operator.js pending
//   ... node examples/dist/operator.js decide <approval id> yes|no [reason]
//
// Environment:
//   SYMPHONIX_BOARD_URL   the board, http:// (h2c) or https://; required
//   SYMPHONIX_TOKEN       an operator token (`board token operator`); required.
//                         Deciding needs an approver or an admin.
//   SYMPHONIX_TRANSPORT   "connect" (the default) or "grpc"
//   SYMPHONIX_PAGE_SIZE   agents per page when listing (0: the board's default)

import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import {
  AgentService,
  AgentState,
  ApprovalService,
  ApprovalState,
  bearer,
  Say,
} from "@symphonix/board-sdk";

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(`${name}: required`);
  }
  return v;
}

function transport(): Transport {
  const options = {
    baseUrl: env("SYMPHONIX_BOARD_URL"),
    httpVersion: "2" as const,
    interceptors: [bearer(env("SYMPHONIX_TOKEN"))],
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

// agents lists every agent the board has seen, a page at a time.
async function agents(t: Transport): Promise<void> {
  const client = createClient(AgentService, t);
  const pageSize = Number(process.env.SYMPHONIX_PAGE_SIZE ?? "0");
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw new Error(`SYMPHONIX_PAGE_SIZE: want a whole number, not ${JSON.stringify(process.env.SYMPHONIX_PAGE_SIZE)}`);
  }
  let pageToken = "";
  let pages = 0;
  let total = 0;
  do {
    const res = await client.listAgents({ pageSize, pageToken });
    pages++;
    for (const a of res.agents) {
      total++;
      console.log(`agent ${a.name} ${(AgentState[a.state] ?? `state ${a.state}`).toLowerCase()} protocol=${a.protocol} build=${a.build}`);
    }
    pageToken = res.nextPageToken;
  } while (pageToken !== "");
  console.log(`agents: ${total} in ${pages} ${pages === 1 ? "page" : "pages"}`);
}

// pending lists the approvals waiting for a decision, newest first.
async function pending(t: Transport): Promise<void> {
  const client = createClient(ApprovalService, t);
  let pageToken = "";
  do {
    const res = await client.listApprovals({ state: ApprovalState.PENDING, pageToken });
    for (const a of res.approvals) {
      console.log(`pending ${a.id} agent=${a.agent} node=${a.node} ask=${JSON.stringify(a.ask)}`);
    }
    pageToken = res.nextPageToken;
  } while (pageToken !== "");
}

// decide says yes or no to one approval, for the digest of what it shows:
// the board refuses a decision for a digest that is not the approval's.
async function decide(t: Transport, id: string, say: string, reason: string): Promise<void> {
  const says: Record<string, Say> = { yes: Say.YES, no: Say.NO };
  if (!(say in says)) {
    throw new Error(`decide: want yes or no, not ${JSON.stringify(say)}`);
  }
  const client = createClient(ApprovalService, t);
  const { approval } = await client.getApproval({ id });
  if (approval === undefined) {
    throw new Error(`decide: the board returned no approval ${id}`);
  }
  console.log(`approval ${approval.id}: ${JSON.stringify(approval.ask)} shows ${approval.showJson} digest=${approval.digest}`);
  const res = await client.decide({ id, say: says[say], digest: approval.digest, reason });
  const after = res.approval;
  console.log(`decided ${id}: ${after ? (ApprovalState[after.state] ?? `state ${after.state}`).toLowerCase() : "?"} say=${say}`);
}

async function main(args: string[]): Promise<void> {
  const t = transport();
  switch (args[0]) {
    case "agents":
      return agents(t);
    case "pending":
      return pending(t);
    case "decide":
      if (args.length < 3) {
        throw new Error("usage: decide <approval id> yes|no [reason]");
      }
      return decide(t, args[1], args[2], args.slice(3).join(" "));
    default:
      throw new Error("usage: operator.js agents | pending | decide <approval id> yes|no [reason]");
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConnectError) {
    console.error(`board: ${Code[err.code]}: ${err.rawMessage}`);
  } else {
    console.error(err instanceof Error ? err.message : err);
  }
  process.exit(1);
});
