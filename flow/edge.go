package flow

// Edge is one way out of a node: normal (From, To) or conditional (From,
// Router, Routes), told apart by Type.
type Edge struct {
	// From is the source node's id.
	From string
	// To is a normal edge's destination: a node id, or END.
	To string
	// Type is EdgeConditional for a conditional edge; empty or EdgeNormal
	// for a normal one.
	Type string
	// Router names the function whose return value picks a route.
	Router string
	// Routes maps a route name to its destination: a node id, or END.
	Routes map[string]string
	// When says in a sentence when each route is taken, by route name
	// (v0.7).
	When map[string]string
	// Limits budgets routes by name (v0.2): take one at most Max times,
	// then take Then instead.
	Limits map[string]*Limit

	keys []string // the keys Load saw, in order
}

// The edge types.
const (
	EdgeNormal      = "normal"
	EdgeConditional = "conditional"
)

// End is the reserved destination that ends a run, and Start the reserved
// source the compiler draws to the flow's start. No node may take either
// as its id.
const (
	End   = "END"
	Start = "START"
)

// ReservedIDs lists the ids no node may have.
var ReservedIDs = []string{Start, End}

// Limit is a budget on one route of a conditional edge.
type Limit struct {
	// Max is how many times the route may be taken. At least 1.
	Max int
	// Then names another route of the same edge, taken once the budget is
	// spent. A route, never a node: a limit cannot invent a destination.
	Then string
	// Per names the node whose visit puts the count back to zero (v0.3).
	// Empty: the count runs for the whole run.
	Per string
}

// conditional reports whether the edge is, or is evidently meant to be, a
// conditional one.
func (e *Edge) conditional() bool {
	return e.Type == EdgeConditional || (e.Type == "" && e.hasConditionalKeys())
}

func (e *Edge) hasConditionalKeys() bool {
	return len(e.conditionalKeys()) > 0
}

// conditionalKeys returns the keys the edge uses that only a conditional
// edge may have.
func (e *Edge) conditionalKeys() []string {
	var ks []string
	if e.keys != nil {
		for _, k := range e.keys {
			switch k {
			case "router", "routes", "when", "limits":
				ks = append(ks, k)
			}
		}
		return ks
	}
	if e.Router != "" {
		ks = append(ks, "router")
	}
	if e.Routes != nil {
		ks = append(ks, "routes")
	}
	if e.When != nil {
		ks = append(ks, "when")
	}
	if e.Limits != nil {
		ks = append(ks, "limits")
	}
	return ks
}

// hasTo reports whether the edge gives a to.
func (e *Edge) hasTo() bool {
	if e.keys != nil {
		for _, k := range e.keys {
			if k == "to" {
				return true
			}
		}
		return false
	}
	return e.To != ""
}
