package flowtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/symphonix/symphonix/flow"
)

// Calls is what a case's mocks were asked during its run: how many times
// each llm node asked the model, and each tool mock (by its key in the
// file) was called.
type Calls struct {
	LLM   map[string]int
	Tools map[string]int
}

// Unused is the mocks a run never reached. A mock that never fires is the
// quietest way for a run to go wrong — the branch it was written for was
// never taken — so it is reported for every case, and it is never a
// failure.
type Unused struct {
	LLM   []string `json:"llm,omitempty"`
	Tools []string `json:"tools,omitempty"`
}

// None reports that every mock was reached.
func (u Unused) None() bool { return len(u.LLM) == 0 && len(u.Tools) == 0 }

// UnusedMocks says which of mock's llm and tool mocks calls never reached,
// each list sorted.
func UnusedMocks(mock Mock, calls Calls) Unused {
	var u Unused
	for _, id := range slices.Sorted(maps.Keys(mock.LLM)) {
		if calls.LLM[id] == 0 {
			u.LLM = append(u.LLM, id)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mock.Tools)) {
		if calls.Tools[name] == 0 {
			u.Tools = append(u.Tools, name)
		}
	}
	return u
}

// errMock marks a call the case did not provide for: it fails the case
// whatever the run made of it (an onError route cannot hide it).
var errMock = errors.New("the case gives no answer")

// mocks answers one case's model and tool calls and counts them.
type mocks struct {
	mock     Mock
	declared map[string]bool
	// fallback takes the tool calls mock.tools does not provide for; nil:
	// such a call fails the case.
	fallback flow.ToolCaller

	mu       sync.Mutex
	calls    Calls
	problems []string // calls the case did not provide for, in words
}

func newMocks(m Mock, f *flow.Flow, children map[string]*flow.Flow) *mocks {
	return &mocks{mock: m, declared: declaredToolsOf(f, children), calls: Calls{LLM: map[string]int{}, Tools: map[string]int{}}}
}

// next is the reply for the n-th call (from 0) of r, and whether there is one.
func next(r Replies, n int) (any, bool) {
	switch {
	case r.Repeat && len(r.Each) == 1:
		return r.Each[0], true
	case n < len(r.Each):
		return r.Each[n], true
	}
	return nil, false
}

func (m *mocks) fail(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	m.problems = append(m.problems, msg)
	return fmt.Errorf("%s: %w", msg, errMock)
}

// Complete answers an llm node from mock.llm.
func (m *mocks) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := req.Node // a child's node is "<agent>/<node>"
	if req.Agent != "" {
		key = req.Agent + "/" + req.Node
	}
	r, ok := m.mock.LLM[key]
	if !ok {
		return flow.ModelReply{}, m.fail("node %s asked the model and the case gives it no answer", key)
	}
	n := m.calls.LLM[key]
	m.calls.LLM[key]++
	v, ok := next(r, n)
	if !ok {
		return flow.ModelReply{}, m.fail("node %s asked the model %d times and the case gives it %d answers", key, n+1, len(r.Each))
	}
	if s, ok := v.(string); ok {
		return flow.ModelReply{Text: s}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return flow.ModelReply{}, err
	}
	return flow.ModelReply{Text: string(b)}, nil
}

// Call answers a tool call from mock.tools: by its full name, else by the
// tool's name without its server.
func (m *mocks) Call(ctx context.Context, name string, args map[string]any) (any, error) {
	m.mu.Lock()
	if m.fallback != nil && !m.provides(name) {
		m.calls.Tools[name]++
		m.mu.Unlock()
		return m.fallback(ctx, name, args)
	}
	defer m.mu.Unlock()
	key := name
	r, ok := m.mock.Tools[name]
	if !ok {
		for k, v := range m.mock.Tools {
			if full, err := resolveTool(m.declared, k); err == nil && full == name {
				key, r, ok = k, v, true
				break
			}
		}
	}
	if !ok {
		return nil, m.fail("tool %s was called and the case gives it no result", name)
	}
	n := m.calls.Tools[key]
	m.calls.Tools[key]++
	v, ok := next(r, n)
	if !ok {
		return nil, m.fail("tool %s was called %d times and the case gives it %d results", name, n+1, len(r.Each))
	}
	if obj, ok := v.(map[string]any); ok && len(obj) == 1 {
		if msg, ok := obj["error"].(string); ok {
			return nil, errors.New(msg)
		}
	}
	return cloneJSON(v), nil
}

// provides reports whether mock.tools answers the tool name.
func (m *mocks) provides(name string) bool {
	if _, ok := m.mock.Tools[name]; ok {
		return true
	}
	for k := range m.mock.Tools {
		if full, err := resolveTool(m.declared, k); err == nil && full == name {
			return true
		}
	}
	return false
}

// ToolMocks answers the tool calls a case's mock.tools provides for, as
// agent test does, and counts every call.
type ToolMocks struct{ m *mocks }

// NewToolMocks returns the tool mocks of mock for the flow f: a call
// mock.tools provides for is answered from it; any other goes to next, the
// real tools (nil: such a call fails, as in agent test).
func NewToolMocks(mock Mock, f *flow.Flow, next flow.ToolCaller) *ToolMocks {
	m := newMocks(Mock{Tools: mock.Tools}, f, nil)
	m.fallback = next
	return &ToolMocks{m: m}
}

// Call is the flow.ToolCaller of the mocks.
func (t *ToolMocks) Call(ctx context.Context, name string, args map[string]any) (any, error) {
	return t.m.Call(ctx, name, args)
}

// Calls returns how many times each tool was called so far: a mocked tool
// by its key in the file, any other by its full name.
func (t *ToolMocks) Calls() Calls {
	c, _ := t.m.snapshot()
	return c
}

// Unprovided says, one line each, the calls the mocks had no answer for.
func (t *ToolMocks) Unprovided() []string {
	_, p := t.m.snapshot()
	return p
}

// cloneJSON copies a decoded JSON value, so a run that changes a result
// cannot change the next call's.
func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cloneJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneJSON(x)
		}
		return out
	}
	return v
}

// snapshot returns the counts and problems so far.
func (m *mocks) snapshot() (Calls, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Calls{LLM: maps.Clone(m.calls.LLM), Tools: maps.Clone(m.calls.Tools)}, slices.Clone(m.problems)
}
