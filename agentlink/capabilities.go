package agentlink

import (
	"fmt"
	"slices"
	"strings"
)

// Protocol is the link protocol this agent speaks. The board names the
// range it accepts in its welcome (Link.Protocols).
const Protocol = "3"

// The capabilities an agent built from this module may announce in its
// hello. Each says that the code behind it runs in the announcing process;
// the caller (package node) decides which do, and announces only those.
const (
	// CapabilityUsers: the agent knows people in its conversations and
	// reports them with its pointers (the served chat's door).
	CapabilityUsers = "users"
	// CapabilityPairing: the agent shows pairing codes and hears of
	// pairings (the served chat's door).
	CapabilityPairing = "pairing"
	// CapabilityHealth: the agent runs health checks and reports their
	// rounds (ReportHealth).
	CapabilityHealth = "health"
	// CapabilityPause: the agent keeps a pause, obeys the board's Pause
	// and reports its state (ReportPause, Config.OnPause).
	CapabilityPause = "pause"
	// CapabilityRuns: the agent records its runs and delivers a summary of
	// each that pauses or ends (Config.Summaries).
	CapabilityRuns = "runs"
	// CapabilityLiveRuns: the agent tells its runs' steps as they happen
	// (SendRunEvent).
	CapabilityLiveRuns = "live-runs"
	// CapabilityFire: the agent starts runs the board fires and stops the
	// runs it is asked to (Config.OnFire, Config.OnStop).
	CapabilityFire = "fire"
	// CapabilityChat: the agent answers the board's chat window, the five
	// requests a ChatRequest carries (Config.OnChat).
	CapabilityChat = "chat"
	// CapabilityTriggers: the agent runs triggers (schedules and webhooks
	// that start runs), reports them (ReportTriggers) and obeys the
	// board's pauses of them (Config.OnTriggerPauses).
	CapabilityTriggers = "triggers"
	// CapabilityDelegation: the agent's runs may delegate to other
	// agents; a child run is reported with its RunDelegation, and every
	// delegation refused or failed as a RunEventDelegationFailed.
	CapabilityDelegation = "delegation"
	// CapabilityDelegationCycle: the agent refuses a circular delegation
	// before it runs, and reports the refusal (AGENT_RECURSION) as a
	// delegation failure. Nothing turns it off; it is announced so that a
	// board reading cycles out of the failures knows silence means none.
	CapabilityDelegationCycle = "delegation-cycle"
	// CapabilityEvals: the agent reports what its folder's eval journal
	// says of its builds' scores (ReportEvals).
	CapabilityEvals = "evals"
)

// Capabilities are every name Config.Capabilities may hold.
var Capabilities = []string{CapabilityUsers, CapabilityPairing, CapabilityHealth, CapabilityPause,
	CapabilityRuns, CapabilityLiveRuns, CapabilityFire, CapabilityChat, CapabilityTriggers,
	CapabilityDelegation, CapabilityDelegationCycle, CapabilityEvals}

// checkCapabilities refuses a name this package does not know, and a name
// given twice.
func checkCapabilities(caps []string) error {
	for i, c := range caps {
		if !slices.Contains(Capabilities, c) {
			return fmt.Errorf("agentlink: Config.Capabilities: %q: want one of %s", c, strings.Join(Capabilities, ", "))
		}
		if slices.Contains(caps[:i], c) {
			return fmt.Errorf("agentlink: Config.Capabilities: %q given twice", c)
		}
	}
	return nil
}
