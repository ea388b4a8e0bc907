package agents

import (
	"errors"

	"github.com/symphonix/symphonix/flow"
)

// The codes an *Error carries, in one list (Codes) so a caller switching
// on them cannot invent one. docs/delegation.md says when each is raised.
const (
	CodeUnknownAgent         = "UNKNOWN_AGENT"          // not a name, or not registered
	CodeDuplicateAgent       = "DUPLICATE_AGENT"        // a name registered twice
	CodeInvalidRegistry      = "INVALID_REGISTRY"       // the registry as a whole
	CodeInvalidRegistryEntry = "INVALID_REGISTRY_ENTRY" // one entry of it
	CodeFlowUnreadable       = "AGENT_FLOW_UNREADABLE"  // an agent's flow cannot be read
	CodeFlowInvalid          = "AGENT_FLOW_INVALID"     // invalid, or without a usable contract
	CodeNotPermitted         = "AGENT_NOT_PERMITTED"    // not in the node's list
	CodeDecisionInvalid      = "AGENT_DECISION_INVALID" // a model's choice that is not one
	CodeInputInvalid         = "AGENT_INPUT_INVALID"    // the input does not fit the contract
	CodeOutputInvalid        = "AGENT_OUTPUT_INVALID"   // the child wrote none of its outputs
	CodeFailed               = "AGENT_FAILED"           // the child failed, or ran past its time
	CodeRecursion            = "AGENT_RECURSION"        // already in the chain, or the chain too deep
)

// Codes is every code an *Error can carry: AGENT_CODES.
var Codes = []string{
	CodeUnknownAgent, CodeDuplicateAgent, CodeInvalidRegistry, CodeInvalidRegistryEntry,
	CodeFlowUnreadable, CodeFlowInvalid, CodeNotPermitted, CodeDecisionInvalid,
	CodeInputInvalid, CodeOutputInvalid, CodeFailed, CodeRecursion,
}

// Error is a delegation refused or failed, or a registry that cannot be
// used: Code is one of Codes, Message says why in words fit to show (no
// secrets: it names agents, channels and codes, never values), Agent is
// the agent it is about as given, and Chain and Invocation say where in a
// run it happened, when it did.
type Error struct {
	Code       string
	Agent      string
	Message    string
	Chain      []string
	Invocation string
	// Err is the cause, when there is one (a child's own failure).
	Err error
}

func (e *Error) Error() string {
	return "agents: " + e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// DelegateFailure says which delegation failed and why, for the engine's
// Watcher (flow.DelegateError).
func (e *Error) DelegateFailure() flow.DelegateFailure {
	return flow.DelegateFailure{Code: e.Code, Target: e.Agent, Chain: e.Chain, Invocation: e.Invocation}
}

func fail(code, agent, msg string) *Error {
	return &Error{Code: code, Agent: agent, Message: msg}
}

// Problems is every problem found with a registry, in the order found.
// errors.As finds the first *Error in it.
type Problems []*Error

func (p Problems) Error() string {
	switch len(p) {
	case 0:
		return "agents: no problems"
	case 1:
		return p[0].Error()
	}
	return p[0].Error() + " (and more)"
}

// Unwrap returns every problem, for errors.As and errors.Is.
func (p Problems) Unwrap() []error {
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errs
}

// ProblemsOf lists the *Errors in err: every one of a Problems, or the one
// *Error; nil for nil, and for an error that holds none.
func ProblemsOf(err error) []*Error {
	var ps Problems
	if errors.As(err, &ps) {
		return ps
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
}
