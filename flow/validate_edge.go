package flow

import (
	"fmt"
	"maps"
	"slices"
)

func (v *validator) edgeCheck(i int, e *Edge) {
	if e == nil {
		return
	}
	path := index("edges", i)
	from := join(path, "from")
	switch {
	case e.From == "":
		v.missing(CodeMissingEdgeFrom, from, "Edge has no from")
	case e.From == Start:
		v.add(CodeReservedEdgeEnd, from, "An edge never starts at START: the compiler draws that edge to start")
	case e.From == End:
		v.add(CodeReservedEdgeEnd, from, "An edge never starts at END: nothing leaves it")
	case !v.isNode(e.From):
		v.add(CodeUnknownEdgeSource, from, fmt.Sprintf("Edge from %q, which is not a node", e.From))
	default:
		if n := v.f.node(e.From); n.Type == KindFanout {
			v.add(CodeFanoutHasEdges, from, fmt.Sprintf("Fanout node %q declares no edges of its own: the compiler writes them", e.From))
		}
	}

	switch e.Type {
	case EdgeConditional:
		v.conditionalCheck(e, path)
	case "":
		if e.hasConditionalKeys() {
			v.missing(CodeMissingEdgeType, join(path, "type"), fmt.Sprintf(
				`Edge from %q has a router or routes but no type: a conditional edge says "type": "conditional"`, e.From))
			v.conditionalCheck(e, path)
			return
		}
		v.normalCheck(e, path)
	case EdgeNormal:
		for _, k := range e.conditionalKeys() {
			v.add(CodeMisplacedKey, join(path, k), fmt.Sprintf("Key %q does not belong on a normal edge", k))
		}
		v.normalCheck(e, path)
	default:
		v.add(CodeUnknownEdgeType, join(path, "type"), fmt.Sprintf(
			`Unknown edge type %q: an edge is "conditional", or normal with no type`, e.Type))
	}
}

func (v *validator) normalCheck(e *Edge, path string) {
	to := join(path, "to")
	switch {
	case e.To == "":
		v.missing(CodeMissingEdgeTo, to, fmt.Sprintf("Edge from %q has no to", e.From))
	case e.To == Start:
		v.add(CodeReservedEdgeEnd, to, "An edge never ends at START")
	case !v.isTarget(e.To):
		v.add(CodeUnknownEdgeTarget, to, fmt.Sprintf("Edge to %q, which is not a node or END", e.To))
	}
}

func (v *validator) conditionalCheck(e *Edge, path string) {
	if e.hasTo() {
		v.add(CodeConditionalEdgeWithTo, join(path, "to"), fmt.Sprintf("Conditional edge from %q also defines to", e.From))
	}
	if e.Router == "" {
		v.missing(CodeMissingRouter, join(path, "router"), fmt.Sprintf("Conditional edge from %q has no router", e.From))
	}
	routesPath := join(path, "routes")
	if len(e.Routes) == 0 {
		v.missing(CodeMissingRoutes, routesPath, fmt.Sprintf("Conditional edge from %q has no routes", e.From))
	}
	for _, r := range slices.Sorted(maps.Keys(e.Routes)) {
		p := join(routesPath, r)
		d := e.Routes[r]
		switch {
		case r == "":
			v.add(CodeInvalidValue, p, "A route needs a name")
		case d == "":
			v.missing(CodeMissingEdgeTo, p, fmt.Sprintf("Route %q has no destination", r))
		case d == Start:
			v.add(CodeReservedEdgeEnd, p, fmt.Sprintf("Route %q goes to START: no route ever does", r))
		case !v.isTarget(d):
			v.add(CodeUnknownEdgeTarget, p, fmt.Sprintf("Route %q goes to %q, which is not a node or END", r, d))
		}
	}
	isRoute := func(r string) bool {
		_, ok := e.Routes[r]
		return ok
	}
	known := len(e.Routes) > 0 // without routes, every name would be unknown

	if e.When != nil {
		p := join(path, "when")
		v.needs(FeatureWhen, p)
		for _, r := range slices.Sorted(maps.Keys(e.When)) {
			if known && !isRoute(r) {
				v.add(CodeUnknownRoute, join(p, r), fmt.Sprintf("when describes %q, which is not a route of this edge", r))
			}
		}
	}

	if e.Limits == nil {
		return
	}
	lp := join(path, "limits")
	if v.needs(FeatureLimits, lp) && v.f.State == nil {
		v.add(CodeLimitsNeedState, lp, "Limits need the flow to declare state: the compiler counts in a channel of its own")
	}
	for _, r := range slices.Sorted(maps.Keys(e.Limits)) {
		p := join(lp, r)
		if known && !isRoute(r) {
			v.add(CodeUnknownRoute, p, fmt.Sprintf("limits names %q, which is not a route of this edge", r))
		}
		l := e.Limits[r]
		if l == nil {
			continue
		}
		if l.Max < 1 && !v.broken[join(p, "max")] {
			v.add(CodeInvalidValue, join(p, "max"), "max must be a whole number, at least 1")
		}
		then := join(p, "then")
		switch {
		case l.Then == "":
			v.missing(CodeMissingField, then, fmt.Sprintf("Limit on route %q has no then", r))
		case l.Then == r:
			v.add(CodeInvalidValue, then, fmt.Sprintf("then must name another route, not %q itself", r))
		case !known || isRoute(l.Then):
		case v.isTarget(l.Then):
			v.add(CodeUnknownRoute, then, fmt.Sprintf("then names a route, not a node: %q is not a route of this edge", l.Then))
		default:
			v.add(CodeUnknownRoute, then, fmt.Sprintf("then names %q, which is not a route of this edge", l.Then))
		}
		if l.Per != "" {
			per := join(p, "per")
			v.needs(FeatureLimitPer, per)
			if !v.isNode(l.Per) {
				v.add(CodeUnknownNodeRef, per, fmt.Sprintf("per names %q, which is not a node", l.Per))
			}
		}
	}
}
