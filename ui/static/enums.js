// The words the web board shows, and sends back, for the enums of the
// board's API: one small table per enum. The API names every value in
// full ("ROLE_ADMIN", "APPROVAL_STATE_PENDING"); people read the word
// ("admin", "pending"). Loaded right after board.js; every other script
// reads and writes enums through these tables, and nowhere else.
//
// The JSON of an answer leaves out a field at its zero value, so an enum
// left unspecified arrives as no field at all: its word is "". A value the
// table does not know (one a newer board added) is shown as the board
// wrote it, never dropped.
"use strict";

const enums = (function () {
  // table is one enum: word(name) is the word for the API's name, and
  // name(word) the name to send for a word ("" for a word it does not
  // know). words lists the words in the enum's order.
  function table(names) {
    const byWord = new Map();
    for (const [name, word] of Object.entries(names)) byWord.set(word, name);
    return Object.freeze({
      word(name) {
        if (name === undefined || name === null || name === "") return "";
        return Object.hasOwn(names, name) ? names[name] : String(name);
      },
      name(word) {
        return byWord.get(word) || "";
      },
      words: Object.freeze(Object.values(names)),
    });
  }

  return Object.freeze({
    // Role: what a person or an operator token may do.
    role: table({ ROLE_VIEWER: "viewer", ROLE_APPROVER: "approver", ROLE_ADMIN: "admin" }),
    // CallerKind: how the one signed in presented themself to Me.
    callerKind: table({ CALLER_KIND_SESSION: "session", CALLER_KIND_OPERATOR: "operator" }),
    // Door: how agents learn who is in their conversations.
    door: table({ DOOR_PAIRING: "pairing", DOOR_VERIFY: "verify", DOOR_NONE: "none" }),
    // AgentState: whether an agent is linked to the board.
    agentState: table({ AGENT_STATE_ONLINE: "online", AGENT_STATE_OFFLINE: "offline" }),
    // HealthStatus: how a round of an agent's health checks came out. The
    // API reads an unspecified status as unknown; so do the views.
    healthStatus: table({
      HEALTH_STATUS_OK: "ok",
      HEALTH_STATUS_DEGRADED: "degraded",
      HEALTH_STATUS_UNKNOWN: "unknown",
    }),
    // CheckStatus: how one health check came out; unspecified is unknown.
    checkStatus: table({ CHECK_STATUS_OK: "ok", CHECK_STATUS_ERROR: "error", CHECK_STATUS_UNKNOWN: "unknown" }),
    // PauseOrigin: where a pause, or the end of one, was decided.
    pauseOrigin: table({ PAUSE_ORIGIN_BOARD: "board", PAUSE_ORIGIN_LOCAL: "local" }),
    // ApprovalState: where an approval stands.
    approvalState: table({
      APPROVAL_STATE_PENDING: "pending",
      APPROVAL_STATE_APPROVED: "approved",
      APPROVAL_STATE_REJECTED: "rejected",
      APPROVAL_STATE_CANCELLED: "cancelled",
      APPROVAL_STATE_EXPIRED: "expired",
      APPROVAL_STATE_SUPERSEDED: "superseded",
    }),
    // Say: what a decision says.
    say: table({ SAY_YES: "yes", SAY_NO: "no", SAY_CANCELLED: "cancelled", SAY_EXPIRED: "expired" }),
    // ApprovalEvent: what one message of WatchApprovals is.
    approvalEvent: table({
      APPROVAL_EVENT_SNAPSHOT: "snapshot",
      APPROVAL_EVENT_SYNCED: "synced",
      APPROVAL_EVENT_RAISED: "raised",
      APPROVAL_EVENT_SUPERSEDED: "superseded",
      APPROVAL_EVENT_VOTED: "voted",
      APPROVAL_EVENT_DECIDED: "decided",
      APPROVAL_EVENT_CANCELLED: "cancelled",
      APPROVAL_EVENT_EXPIRED: "expired",
      APPROVAL_EVENT_HEARTBEAT: "heartbeat",
      APPROVAL_EVENT_ESCALATED: "escalated",
    }),
    // RunState: where a run stands.
    runState: table({
      RUN_STATE_RUNNING: "running",
      RUN_STATE_PAUSED: "paused",
      RUN_STATE_FINISHED: "finished",
      RUN_STATE_FAILED: "failed",
      RUN_STATE_STOPPED: "stopped",
    }),
    // StepOutcome: how one step of a run came out; unspecified is a step
    // still running.
    stepOutcome: table({
      STEP_OUTCOME_OK: "ok",
      STEP_OUTCOME_FAILED: "failed",
      STEP_OUTCOME_PAUSED: "paused",
      STEP_OUTCOME_STOPPED: "stopped",
    }),
    // TriggerKind: what makes a trigger occur.
    triggerKind: table({ TRIGGER_KIND_SCHEDULE: "schedule", TRIGGER_KIND_WEBHOOK: "webhook" }),
    // EvalSource: where the board heard an eval score from.
    evalSource: table({ EVAL_SOURCE_REPORTED: "reported", EVAL_SOURCE_PUBLISHED: "published" }),
    // EvalFlag: what to look at about the build an agent runs now.
    evalFlag: table({
      EVAL_FLAG_REGRESSED: "regressed",
      EVAL_FLAG_BELOW_THRESHOLD: "below threshold",
      EVAL_FLAG_NOT_SCORED: "not scored",
    }),
    // DeliveryState: where a triggered run's result stands.
    deliveryState: table({
      DELIVERY_STATE_NONE: "none",
      DELIVERY_STATE_PENDING: "pending",
      DELIVERY_STATE_DELIVERED: "delivered",
      DELIVERY_STATE_FAILED: "failed",
    }),
    // PauseKind: what a paused run waits for.
    pauseKind: table({ PAUSE_KIND_ASK: "ask", PAUSE_KIND_APPROVAL: "approval" }),
    // CycleKnowledge: what the board can tell of an agent's circular
    // delegations. "cannot tell" is never shown as "none".
    cycleKnowledge: table({
      CYCLE_KNOWLEDGE_CANNOT_TELL: "cannot tell",
      CYCLE_KNOWLEDGE_NONE_REPORTED: "none reported",
      CYCLE_KNOWLEDGE_REPORTED: "reported",
    }),
    // AlertState: where one alert rule stands for one agent.
    alertState: table({ ALERT_STATE_FIRING: "firing", ALERT_STATE_QUIET: "quiet", ALERT_STATE_CANNOT_TELL: "cannot tell" }),
    // AlertCondition: what an alert rule watches for.
    alertCondition: table({ ALERT_CONDITION_DELEGATION_CYCLE: "delegation cycle" }),
    // RunEventKind: what one message of WatchRuns is.
    runEvent: table({
      RUN_EVENT_KIND_SNAPSHOT: "snapshot",
      RUN_EVENT_KIND_SYNCED: "synced",
      RUN_EVENT_KIND_STARTED: "started",
      RUN_EVENT_KIND_STEP: "step",
      RUN_EVENT_KIND_PAUSED: "paused",
      RUN_EVENT_KIND_RESUMED: "resumed",
      RUN_EVENT_KIND_ENDED: "ended",
      RUN_EVENT_KIND_HEARTBEAT: "heartbeat",
    }),
  });
})();
