package agentlink

import (
	"context"
	"sort"
	"sync"
)

// Holding is what the agent's runtime holds: every approval it is waiting
// on, so the link can ask about each again whenever it comes up.
type Holding interface {
	All(ctx context.Context) ([]Raise, error)
}

// HeldInMemory is a Holding kept in memory, for tests and agents without a
// folder: a restart forgets it. Keyed by run and node, as the board is. It
// is safe for concurrent use.
type HeldInMemory struct {
	mu   sync.Mutex
	held map[runNode]Raise
}

// Hold records r as held, replacing what was held for its run and node.
func (h *HeldInMemory) Hold(r Raise) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[runNode]Raise{}
	}
	h.held[runNode{r.Run, r.Node}] = r
}

// Release forgets what is held for run and node.
func (h *HeldInMemory) Release(run, node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.held, runNode{run, node})
}

// All lists everything held, by run and node.
func (h *HeldInMemory) All(context.Context) ([]Raise, error) {
	h.mu.Lock()
	out := make([]Raise, 0, len(h.held))
	for _, r := range h.held {
		out = append(out, r)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Run != out[j].Run {
			return out[i].Run < out[j].Run
		}
		return out[i].Node < out[j].Node
	})
	return out, nil
}
