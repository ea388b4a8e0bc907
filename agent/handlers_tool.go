package agent

import (
	"context"
	"fmt"
	"maps"

	"github.com/symphonix/symphonix/flow"
)

// toolCaller calls the flow's MCP tools for the handlers and routers an
// MCP tool provides: the Gate first, then the agent's tool caller, which
// asks the subscription (the board's switches) and is journalled as a tool
// node's call is.
type toolCaller struct {
	gate     flow.Gate
	call     flow.ToolCaller
	declared map[string]bool // the channels a handler may write; nil: any
}

func (t *toolCaller) do(ctx context.Context, p Provision, s flow.State) (any, error) {
	if t.call == nil {
		return nil, fmt.Errorf("%s: the agent has no MCP tools", label(p))
	}
	args := maps.Clone(map[string]any(s))
	if args == nil {
		args = map[string]any{}
	}
	if t.gate != nil {
		if err := t.gate(ctx, p.Tool, args); err != nil {
			return nil, err
		}
	}
	return t.call(ctx, p.Tool, args)
}

// handler is the flow.Handler of the MCP tool p names: the state is its
// arguments, and its result, an object, is the update.
func (t *toolCaller) handler(p Provision) flow.Handler {
	return func(ctx context.Context, s flow.State) (flow.Update, error) {
		v, err := t.do(ctx, p, s)
		if err != nil {
			return nil, err
		}
		return updateOfValue(p, v, t.declared)
	}
}

// router is the flow.Router of the MCP tool p names: the state is its
// arguments, and its result, a string, is the route.
func (t *toolCaller) router(p Provision) flow.Router {
	return func(ctx context.Context, s flow.State) (string, error) {
		v, err := t.do(ctx, p, s)
		if err != nil {
			return "", err
		}
		route, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s: gave %s, want a string naming a route", label(p), flow.KindOf(v))
		}
		return route, nil
	}
}
