package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/subscription"
)

// subscribe is the subscription of the flow in dir: its declaration, and,
// with a board, the board's last word remembered in the folder.
func subscribe(f *flow.Flow, dir string, monitored bool) (*subscription.Subscription, string, error) {
	declared := map[string][]string{}
	if f.Requires != nil {
		for server, s := range f.Requires.MCP {
			if s == nil {
				continue
			}
			for _, t := range s.Tools {
				declared[server] = append(declared[server], t.Name)
			}
		}
	}
	cfg := subscription.Config{Declared: declared, Board: monitored}
	if monitored {
		cfg.Memory = subscription.MemoryPath(dir)
	}
	sub, err := subscription.New(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("requires.mcp: %w", err)
	}
	if !monitored {
		return sub, "tools: no board configured: every tool the flow declares may be called", nil
	}
	if err := sub.Recall(); err != nil {
		// Unreadable memory is a board that never spoke: nothing is on.
		return sub, fmt.Sprintf("tools: none until the board says (%v)", err), nil
	}
	on, src := sub.On()
	if src == subscription.FromMemory {
		return sub, fmt.Sprintf("tools: the board's last word, from %s: %d on, until the board speaks", cfg.Memory, len(on)), nil
	}
	return sub, "tools: none until the board says which are on", nil
}

// gated asks sub before every call: a refused call is that call's error,
// with words a model can act on, and never reaches the server. A call made
// within an allowlist (subscription.Within: the run was started allowing
// fewer tools) is held to it too.
func gated(sub *subscription.Subscription, call flow.ToolCaller) flow.ToolCaller {
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		if err := sub.MayCallToolIn(ctx, name).Err(); err != nil {
			return nil, err
		}
		return call(ctx, name, args)
	}
}

// WithinTools returns ctx narrowed to the tools named ("<server>.<tool>"):
// a run started on it (and every run it delegates to) may call only those,
// within what the subscription switches on; a call it leaves out is refused
// as a switched-off tool is (subscription.Within). Empty names allows none.
func WithinTools(ctx context.Context, names []string) context.Context {
	return subscription.Within(ctx, names)
}

// DeclaredTools returns every "<server>.<tool>" the flow agent in dir
// declares, sorted: those of its flow's requires.mcp and of the agents it
// delegates to — what its subscription declares once Open has opened it —
// read from its files without starting anything. It fails as Open would
// on a flow that cannot be read or a registry that cannot be loaded.
func DeclaredTools(dir string) ([]string, error) {
	f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		return nil, err
	}
	d, err := openDelegation(dir, f)
	if err != nil {
		return nil, err
	}
	tf, err := d.requires(f)
	if err != nil {
		return nil, err
	}
	var names []string
	if tf.Requires != nil {
		for server, s := range tf.Requires.MCP {
			if s == nil {
				continue
			}
			for _, t := range s.Tools {
				names = append(names, server+"."+t.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
