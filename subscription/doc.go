// Package subscription answers one question for an agent: which of the MCP
// tools its flow declares is it switched on for right now, and who said so.
//
// The flow's declaration (requires.mcp) is the upper bound and the board is
// the switch. The rule is kept here, in one place, rather than at each call
// site:
//
//   - No board configured: the declaration. The answer's source is [NoBoard].
//   - A board that has spoken: what it said, within the declaration. The
//     source is [FromBoard] while the board is reachable, and [FromMemory]
//     when the agent is using the board's last word, kept on disk, because
//     the board is unreachable or the agent restarted before hearing again.
//   - A board that never spoke: nothing. The source is [NobodyDecided].
//     Nobody having decided is never read as everything.
//
// Tools are named "<server>.<tool>", as a flow's tool node names them; a
// server's name holds no dot and a tool's may, so a name is split at its
// first dot.
//
// A run can be started with fewer tools than its agent has: [Within] puts
// an allowlist in the run's context, and [Subscription.MayCallToolIn] refuses
// what it leaves out ([NotAllowed]) as a switched-off tool is refused.
//
// A switch applies live: [Subscription.MayCallTool] reads the current word on
// every call, so the board's next word needs neither a restart nor a
// redeploy. Nothing here is compiled into a flow: a switch that needs a
// rebuild is not a switch.
package subscription
