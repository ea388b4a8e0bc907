package agentlink

import (
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// The bounds of what the link carries of a delegation, as the board takes
// it.
const (
	// MaxChain is the most agents a chain carries: the latest, when there
	// are more.
	MaxChain = 32
	// MaxAgentName is the most bytes of an agent's name, a target as
	// given, a node or an invocation id.
	MaxAgentName = 64
	// MaxDelegationMessage is the most bytes of why a delegation failed.
	MaxDelegationMessage = 1024
)

// RunDelegation is how a run was delegated to: the run and node of the
// agent node that started it, the call's id, the registered agent it ran
// as, and the chain of agents from the root run's to it.
type RunDelegation struct {
	ParentRunID, ParentNode, InvocationID, Agent string
	Chain                                        []string
}

// DelegationFailure is a delegation one of a run's agent nodes asked for
// and did not get: the node, the agent as given, the code (package
// agents' codes), why without secrets, the chain when it was asked, and
// the call's id when it had one.
type DelegationFailure struct {
	Node, Target, Code, Message string
	Chain                       []string
	InvocationID                string
	// At is when it was refused or failed: sent in a summary, where the
	// board keeps it; a live event's time is the board's.
	At time.Time
}

// MaxRunFailures is the most delegation failures one run summary carries.
const MaxRunFailures = 64

func runDelegationOf(d *RunDelegation) *boardv1.RunDelegation {
	if d == nil {
		return nil
	}
	return &boardv1.RunDelegation{ParentRunId: Clip(d.ParentRunID, MaxRunID), ParentNode: Clip(d.ParentNode, MaxAgentName),
		InvocationId: Clip(d.InvocationID, MaxAgentName), Agent: Clip(d.Agent, MaxAgentName), Chain: chainOf(d.Chain)}
}

func delegationFailureOf(f *DelegationFailure, run string) *boardv1.DelegationFailure {
	if f == nil {
		return &boardv1.DelegationFailure{RunId: run}
	}
	return &boardv1.DelegationFailure{RunId: run, Node: Clip(f.Node, MaxAgentName), Target: Clip(f.Target, MaxAgentName),
		Code: f.Code, Message: Clip(f.Message, MaxDelegationMessage), Chain: chainOf(f.Chain),
		InvocationId: Clip(f.InvocationID, MaxAgentName)}
}

// chainOf is a chain within the link's bounds.
func chainOf(chain []string) []string {
	if len(chain) > MaxChain {
		chain = chain[len(chain)-MaxChain:]
	}
	out := make([]string, len(chain))
	for i, c := range chain {
		out[i] = Clip(c, MaxAgentName)
	}
	return out
}
