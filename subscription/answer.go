package subscription

import (
	"errors"
	"fmt"
	"strings"
)

// Answer is what [Subscription.MayCallTool] says about one tool.
type Answer struct {
	// Tool is the name asked about, as it was given.
	Tool string
	// Allowed: the tool may be called now.
	Allowed bool
	// Source is where the answer came from, allowed or not.
	Source Source
	// Reason says why a call is refused; empty when Allowed.
	Reason Reason
	// Refusal is the refusal as a model can act on it: which tool, why, and
	// what it may call instead. Empty when Allowed.
	Refusal string
}

// Reason is why a tool call is refused.
type Reason string

const (
	// Undeclared: the flow does not declare the tool (or the name is not a
	// "<server>.<tool>" name). No board can switch it on.
	Undeclared Reason = "undeclared"
	// NotSwitchedOn: the flow declares the tool and it is not switched on:
	// the board (or its remembered word) left it off, or nobody has decided.
	NotSwitchedOn Reason = "not-switched-on"
	// NotAllowed: the flow declares the tool, and the call is made within an
	// allowlist that leaves it out (Within): whoever started the run allowed
	// it fewer tools. No board can switch it on for that run.
	NotAllowed Reason = "not-allowed"
)

// ErrRefused is what a [RefusedError] is: test for it with errors.Is.
var ErrRefused = errors.New("tool call refused by the subscription")

// RefusedError is a refused [Answer] as an error, for a caller that turns a
// refusal into the result of a tool call. Its text is the refusal a model can
// act on.
type RefusedError struct {
	Answer Answer
}

func (e *RefusedError) Error() string { return e.Answer.Refusal }

// Is reports whether target is [ErrRefused].
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Err returns nil when the call is allowed, and a [*RefusedError] when not.
func (a Answer) Err() error {
	if a.Allowed {
		return nil
	}
	return &RefusedError{Answer: a}
}

// refusal writes what a model is told when name may not be called: which
// tool, why, and what it may do instead. on is what is switched on now.
func refusal(name string, why Reason, src Source, on []string) string {
	var b strings.Builder
	switch {
	case why == Undeclared:
		fmt.Fprintf(&b, "The tool %q cannot be called: this agent's flow does not declare it, so no one can switch it on.", name)
	case src == NobodyDecided:
		fmt.Fprintf(&b, "The tool %q cannot be called: a board decides which tools this agent may use, and it has not said yet, so no tool is switched on.", name)
	case src == FromMemory:
		fmt.Fprintf(&b, "The tool %q cannot be called: it is switched off for this agent (the board's last word, remembered while the board cannot be reached).", name)
	default:
		fmt.Fprintf(&b, "The tool %q cannot be called: it is switched off for this agent by the board.", name)
	}
	if len(on) == 0 {
		b.WriteString(" No tool is switched on right now: do not call any tool; answer without one, and tell the person plainly what cannot be done now.")
		return b.String()
	}
	fmt.Fprintf(&b, " Do not call it again. Tools you may call: %s.", strings.Join(on, ", "))
	return b.String()
}
