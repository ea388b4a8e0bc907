// @symphonix/board-sdk: the board's API (symphonix.board.v1) for TypeScript.
//
// The messages, enums and service descriptors are generated from proto/ by
// protoc-gen-es (src/gen/, never edited by hand); connect-es clients take
// the service descriptors as they are:
//
//     import { createClient } from "@connectrpc/connect";
//     import { createConnectTransport } from "@connectrpc/connect-node";
//     import { AgentService, bearer } from "@symphonix/board-sdk";
//
//     const transport = createConnectTransport({ baseUrl, httpVersion: "2", interceptors: [bearer(token)] });
//     const agents = createClient(AgentService, transport);
//
// Beside them: the digests an agent computes (approvalDigest, buildOf) and
// what an agent needs to speak the link (protocol, Capability, Outbox).

export * from "./gen/symphonix/board/v1/agent_pb.js";
export * from "./gen/symphonix/board/v1/approval_pb.js";
export * from "./gen/symphonix/board/v1/audit_pb.js";
export * from "./gen/symphonix/board/v1/conversation_pb.js";
export * from "./gen/symphonix/board/v1/link_pb.js";
export * from "./gen/symphonix/board/v1/tool_pb.js";
export * from "./gen/symphonix/board/v1/user_pb.js";

export { approvalDigest, buildOf, canonicalJSON, digestOf, maxDepth, stillTheSameThing } from "./digest.js";
export { bearer, Capability, Outbox, protocol } from "./link.js";
