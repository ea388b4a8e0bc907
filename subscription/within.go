package subscription

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// allowKey is the context key of a run's allowlist (Within).
type allowKey struct{}

// Within returns ctx narrowed to the tools named ("<server>.<tool>"): a
// tool call made on it, or on a context derived from it, may call only
// those, and only while the subscription switches them on
// ([Subscription.MayCallToolIn]). An empty (or nil) names allows none.
// Narrowing a context already narrowed keeps what both allow. It is how a
// caller that starts a run for someone else (an Agent Flow agent() call's
// tools option) hands that run fewer tools than the agent has, without a
// second gate: the subscription's answer says so.
func Within(ctx context.Context, names []string) context.Context {
	allowed := make(map[string]struct{}, len(names))
	prev, narrowed := ctx.Value(allowKey{}).(map[string]struct{})
	for _, name := range names {
		if _, ok := prev[name]; ok || !narrowed {
			allowed[name] = struct{}{}
		}
	}
	return context.WithValue(ctx, allowKey{}, allowed)
}

// AllowedWithin returns the allowlist ctx carries (Within), sorted, and
// whether it carries one.
func AllowedWithin(ctx context.Context) ([]string, bool) {
	allowed, ok := ctx.Value(allowKey{}).(map[string]struct{})
	if !ok {
		return nil, false
	}
	return sortedNames(allowed), true
}

// MayCallToolIn is [Subscription.MayCallTool] for a call made on ctx: a tool
// the flow declares and ctx's allowlist ([Within]) leaves out is refused
// with the reason [NotAllowed], whatever the board says; a tool it allows is
// answered as MayCallTool answers it, the tools it then names as callable
// being those both allow. Without an allowlist it is MayCallTool.
func (s *Subscription) MayCallToolIn(ctx context.Context, name string) Answer {
	allowed, narrowed := ctx.Value(allowKey{}).(map[string]struct{})
	a := s.MayCallTool(name)
	if !narrowed || a.Reason == Undeclared {
		return a
	}
	_, in := allowed[name]
	if a.Allowed && in {
		return a
	}
	on, src := s.On()
	on = slices.DeleteFunc(on, func(n string) bool { _, ok := allowed[n]; return !ok })
	why := a.Reason
	if !in {
		why = NotAllowed
	}
	return Answer{Tool: name, Source: src, Reason: why, Refusal: refusalWithin(name, why, src, on, sortedNames(allowed))}
}

// refusalWithin is refusal for a call made within an allowlist: on is what
// may be called now (switched on and allowed).
func refusalWithin(name string, why Reason, src Source, on, allowed []string) string {
	if why != NotAllowed {
		return refusal(name, why, src, on)
	}
	var b strings.Builder
	if len(allowed) == 0 {
		fmt.Fprintf(&b, "The tool %q cannot be called: this run was started allowing no tool.", name)
	} else {
		fmt.Fprintf(&b, "The tool %q cannot be called: this run was started allowing only %s.", name, strings.Join(allowed, ", "))
	}
	if len(on) == 0 {
		b.WriteString(" No tool may be called in this run: do not call any tool; answer without one, and tell the person plainly what cannot be done now.")
		return b.String()
	}
	fmt.Fprintf(&b, " Do not call it again. Tools you may call: %s.", strings.Join(on, ", "))
	return b.String()
}
