// Package linkload measures what a board spends on connected agents: memory
// and goroutines per agent, and the round trip of an agent's ping (Run); and
// how fast a fleet comes back to a board killed with SIGKILL and restarted
// (RunStorm).
//
// Run's board runs in the measuring process; the agents run in a child
// process, the test binary started again with -test.run=^TestLoadChild$
// (Child), so that the board's figures are not mixed with the agents'.
// RunStorm's board runs in a child process of its own too, the test binary
// started with -test.run=^TestStormBoard$ (BoardChild), so that it can be
// killed. The processes talk over the child's standard input and output:
// the parent writes commands, one a line; the child answers with one JSON
// Event a line.
package linkload

import "time"

// Environment the parent sets for the child.
const (
	// EnvChild is "1" in the child and unset everywhere else.
	EnvChild = "LINKLOAD_CHILD"
	// EnvURL is the board's URL.
	EnvURL = "LINKLOAD_URL"
	// EnvPlan is the path of the JSON Plan: the tokens and the pace.
	EnvPlan = "LINKLOAD_PLAN"
	// EnvBoard is "1" in RunStorm's board process and unset everywhere else.
	EnvBoard = "LINKLOAD_BOARD"
	// EnvData is the board process's data folder (its SQLite store).
	EnvData = "LINKLOAD_DATA"
	// EnvDSN, when set, is the PostgreSQL store the board process serves,
	// with other boards, instead of EnvData's.
	EnvDSN = "LINKLOAD_DSN"
	// EnvAddr is where the board process listens.
	EnvAddr = "LINKLOAD_ADDR"
	// EnvPing is the board process's ping interval.
	EnvPing = "LINKLOAD_PING"
	// EnvCPUProfile, if set, is where the board process writes its CPU
	// profile, from its start until cmdStopProfile.
	EnvCPUProfile = "LINKLOAD_CPUPROFILE"
	// EnvAgentsProfile, if set, is where an agents' process writes its CPU
	// profile, from cmdMark until it answers cmdBack.
	EnvAgentsProfile = "LINKLOAD_AGENTS_CPUPROFILE"
	// EnvBare is "1" when RunStorm's board process is to serve a bare link
	// service instead of a board (StormOptions.Bare).
	EnvBare = "LINKLOAD_BARE"
)

// BoardTest is the test the parent runs as RunStorm's board: every test
// binary that calls RunStorm must have one that calls BoardChild when
// EnvBoard is "1".
const BoardTest = "TestStormBoard"

// ChildTest is the test the parent runs in the child: every test binary
// that calls Run must have one that calls Child when EnvChild is "1".
const ChildTest = "TestLoadChild"

// Commands the parent writes to the child's standard input. Closing it
// ends the child.
const (
	// cmdMeasure: measure the child's memory, then record ping round trips
	// for the plan's window and report.
	cmdMeasure = "measure"
	// cmdMark: forget what the agents did so far; from now on count their
	// refusals and which of them went down and came back. Answered "marked".
	cmdMark = "mark"
	// cmdBack: answer "back" once every agent has gone down and come back
	// since the mark, with when.
	cmdBack = "back"
	// cmdCount: (to the board) answer "count" with the agents online in
	// the store.
	cmdCount = "count"
	// cmdStopProfile: (to the board) stop its CPU profile; answered
	// "profiled".
	cmdStopProfile = "stop-profile"
	// cmdMoved: answer "moved" once at least one agent has gone down since
	// the mark and every agent that did has come back (to another board),
	// with when and how many.
	cmdMoved = "moved"
	// cmdCountHere: (to a board sharing its store) answer "count" with the
	// agents online in the store whose links it holds.
	cmdCountHere = "count-here"
)

// Plan is what the child runs.
type Plan struct {
	// Agents: the agents to connect. The first Probes of them are probes
	// (raw link clients that time their pings); the rest run agentlink.
	Agents []Credential `json:"agents"`
	Probes int          `json:"probes"`
	// DialRate: links started per second.
	DialRate int `json:"dial_rate"`
	// ProbeEvery: how often a probe pings.
	ProbeEvery time.Duration `json:"probe_every"`
	// Window: how long the probes record round trips after cmdMeasure.
	Window time.Duration `json:"window"`
	// CA: the PEM certificate to trust when the board serves TLS.
	CA string `json:"ca,omitempty"`
	// AgentBackoff: the agents keep agentlink's own backoff (250 ms to
	// 30 s) rather than the quick one a load run uses.
	AgentBackoff bool `json:"agent_backoff,omitempty"`
	// HealthEvery: when set, every agent that is not a probe announces
	// health and reports a round this often, each differing from the last
	// so that each is sent and kept; the first at a random time within
	// one period, so the fleet does not report in step.
	HealthEvery time.Duration `json:"health_every,omitempty"`
	// RunEvery: when set, every agent that is not a probe announces runs
	// and live-runs, and finishes a run of RunSteps steps this often: a
	// start, an entered and a finished event for each step, and a summary
	// of the run with its steps; the first at a random time within one
	// period.
	RunEvery time.Duration `json:"run_every,omitempty"`
	// RunsUnsent: with RunEvery, the agents make the same runs but
	// announce neither runs nor live-runs, so that none of it reaches the
	// board: the load of the same runs without run events.
	RunsUnsent bool `json:"runs_unsent,omitempty"`
	// BareAgents: the agents that are not probes are raw clients of the
	// generated API, as probes are, that keep no round trips and redial as
	// agentlink does: the least an agent's link can cost, where agentlink's
	// own work is not what is measured. They take the welcome's ping
	// interval, and dial the first board of the URL.
	BareAgents bool `json:"bare_agents,omitempty"`
}

// RunSteps is how many steps each run of a load run takes, one every
// StepEvery: a run of a load run lasts about two seconds, as a short run of
// handlers and a model call or two does.
const (
	RunSteps  = 20
	StepEvery = 100 * time.Millisecond
)

// Credential is one agent's name and token.
type Credential struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

// Event is one line the child writes.
type Event struct {
	// Kind: "up" once every agent is linked, "report" after cmdMeasure,
	// "error" when the child gives up.
	Kind string `json:"kind"`
	// Up: agents linked now.
	Up int `json:"up"`
	// Memory: the child's own memory before the window ("report").
	Memory *Snapshot `json:"memory,omitempty"`
	// RTT: the probes' round trips during the window ("report").
	RTT *RTT `json:"rtt,omitempty"`
	// CPU: the child's CPU time during the window, in cores ("report").
	CPU float64 `json:"cpu,omitempty"`
	// Drops: links, agents' and probes', that ended before the child was
	// told to stop; each was dialled again.
	Drops int64 `json:"drops"`
	// At: when, on the wall clock, in Unix nanoseconds: the board listening
	// ("listening"), every agent back ("back").
	At int64 `json:"at,omitempty"`
	// AtP50 and AtP90: ("back") when half and nine tenths of the agents
	// were back.
	AtP50 int64 `json:"at_p50,omitempty"`
	AtP90 int64 `json:"at_p90,omitempty"`
	// Refused: dials the board refused since the mark (agentlink's "board
	// refused the link"); Unavailable: dials it answered unavailable.
	Refused int64 `json:"refused,omitempty"`
	// Down: ("moved") the agents that went down since the mark.
	Down        int    `json:"down,omitempty"`
	Unavailable int64  `json:"unavailable,omitempty"`
	Error       string `json:"error,omitempty"`
}
