// Package linkload measures what a board spends on connected agents: memory
// and goroutines per agent, and the round trip of an agent's ping.
//
// The board runs in the measuring process (Run); the agents run in a child
// process, the test binary started again with -test.run=^TestLoadChild$
// (Child), so that the board's figures are not mixed with the agents'. The
// two talk over the child's standard input and output: the parent writes
// commands, one a line; the child answers with one JSON Event a line.
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
)

// ChildTest is the test the parent runs in the child: every test binary
// that calls Run must have one that calls Child when EnvChild is "1".
const ChildTest = "TestLoadChild"

// Commands the parent writes to the child's standard input. Closing it
// ends the child.
const (
	// cmdMeasure: measure the child's memory, then record ping round trips
	// for the plan's window and report.
	cmdMeasure = "measure"
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
}

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
	Drops int64  `json:"drops"`
	Error string `json:"error,omitempty"`
}
