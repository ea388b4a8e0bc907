package flow_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// load parses a flow written in a test.
func load(t testing.TB, src string) *flow.Flow {
	t.Helper()
	f, err := flow.Load([]byte(src))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return f
}

// loadFile parses one of the example flows in testdata.
func loadFile(t testing.TB, name string) *flow.Flow {
	t.Helper()
	f, err := flow.LoadFile("testdata/" + name)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	return f
}

func build(t testing.TB, f *flow.Flow, opts flow.BuildOptions) *flow.Graph {
	t.Helper()
	g, err := flow.Build(f, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return g
}

// set is a handler that writes u.
func set(u flow.Update) flow.Handler {
	return func(context.Context, flow.State) (flow.Update, error) { return u, nil }
}

// route is a router that always picks r.
func route(r string) flow.Router {
	return func(context.Context, flow.State) (string, error) { return r, nil }
}

// counter counts calls, by name, safely from many goroutines.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// counted wraps a handler so that c counts its calls under name.
func counted(c *counter, name string, h flow.Handler) flow.Handler {
	return func(ctx context.Context, s flow.State) (flow.Update, error) {
		c.add(name)
		return h(ctx, s)
	}
}

// testModel is a deterministic stand-in model. Each node has a script of
// replies, taken in order, the last one repeating; a node with no script
// answers with its prompt's first line. Every request is kept.
type testModel struct {
	mu      sync.Mutex
	script  map[string][]string
	asked   []flow.ModelRequest
	replies map[string]int
}

func (m *testModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, req)
	s := m.script[req.Node]
	if len(s) == 0 {
		first, _, _ := strings.Cut(req.Prompt, "\n")
		return flow.ModelReply{Text: "  " + first + "  "}, nil
	}
	if m.replies == nil {
		m.replies = map[string]int{}
	}
	i := min(m.replies[req.Node], len(s)-1)
	m.replies[req.Node]++
	return flow.ModelReply{Text: s[i]}, nil
}

// prompts returns the prompts the model was asked by node, in order.
func (m *testModel) prompts(node string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []string
	for _, r := range m.asked {
		if r.Node == node {
			ps = append(ps, r.Prompt)
		}
	}
	return ps
}

// clock is a fake clock a second further on at each reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// threads lists what a checkpointer holds.
func threads(t testing.TB, c flow.Checkpointer) []string {
	t.Helper()
	ts, err := c.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func fail(msg string) flow.Handler {
	return func(context.Context, flow.State) (flow.Update, error) { return nil, fmt.Errorf("%s", msg) }
}
