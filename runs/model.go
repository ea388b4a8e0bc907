package runs

import (
	"context"

	"github.com/symphonix/symphonix/flow"
)

// WrapModel returns m with the tokens of every call it answers added to
// the run on the call's context (flow.RunOf) and to the step of the node
// that asked, as the provider reported them. A nil m is nil.
func (r *Recorder) WrapModel(m flow.Model) flow.Model {
	if m == nil {
		return nil
	}
	return countedModel{r: r, m: m}
}

type countedModel struct {
	r *Recorder
	m flow.Model
}

func (c countedModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	reply, err := c.m.Complete(ctx, req)
	if u := reply.Usage; u != nil {
		c.r.spent(flow.RunOf(ctx), req.Node, Tokens{
			Input: int64(u.InputTokens), Output: int64(u.OutputTokens), Cached: int64(u.CachedTokens),
			Total: int64(u.InputTokens + u.OutputTokens),
		})
	}
	return reply, err
}

// spent adds t to run id and to its newest step of node still in flight
// (the newest of that node when none is).
func (r *Recorder) spent(id, node string, t Tokens) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.runs[id]
	if rec == nil {
		return
	}
	rec.run.Tokens.add(t)
	best := -1
	for k, i := range rec.open {
		if k.node == node && i > best {
			best = i
		}
	}
	if best < 0 {
		for i := len(rec.run.Steps) - 1; i >= 0; i-- {
			if rec.run.Steps[i].Node == node {
				best = i
				break
			}
		}
	}
	if best >= 0 {
		rec.run.Steps[best].Tokens.add(t)
	}
}
