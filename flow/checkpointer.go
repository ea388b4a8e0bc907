package flow

import (
	"errors"
	"fmt"
)

// Errors the build step returns (wrapped) for a flow that waits for a person
// when it is built without a checkpointer. This is a build-time refusal,
// not a validation problem: the same flow is valid, and builds, with one.
// Test for them with errors.Is.
var (
	// ErrApprovalNeedsCheckpointer: a paused run lives in a checkpointer;
	// without one the first approval would end the run rather than hold it.
	ErrApprovalNeedsCheckpointer = errors.New("flow: approval needs a checkpointer: a paused run lives in one, and without it the first approval would end the run rather than hold it")
	// ErrAskNeedsCheckpointer: an ask node, like approval, needs a
	// checkpointer to wait in.
	ErrAskNeedsCheckpointer = errors.New("flow: an ask node needs a checkpointer to wait in")
)

// CheckpointerRequired returns nil when the flow never waits for a person,
// and otherwise ErrApprovalNeedsCheckpointer or ErrAskNeedsCheckpointer,
// wrapped with the first node that waits. The build step calls it when it
// has no checkpointer, and refuses to compile on an error.
func CheckpointerRequired(f *Flow) error {
	if f == nil {
		return nil
	}
	for _, n := range f.Nodes {
		switch {
		case n == nil:
		case n.Approval != nil:
			return fmt.Errorf("node %q: %w", n.ID, ErrApprovalNeedsCheckpointer)
		case n.Type == KindAsk:
			return fmt.Errorf("node %q: %w", n.ID, ErrAskNeedsCheckpointer)
		}
	}
	return nil
}
