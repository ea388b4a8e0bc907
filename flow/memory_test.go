package flow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

const chat = `{
	"version": "0.9", "conversation": true, "start": "reply",
	"inputs": ["question"], "outputs": ["answer"],
	"state": {
		"question": { "type": "string" },
		"answer":   { "type": "string" },
		"scratch":  { "default": "fresh" },
		"spent":    { "type": "number", "remembers": true, "default": 0 }
	},
	"nodes": [ { "id": "reply", "handler": "reply" } ],
	"edges": [ { "from": "reply", "to": "END" } ]
}`

func chatRegistry() flow.Registry {
	return flow.Registry{Handlers: map[string]flow.Handler{
		"reply": func(_ context.Context, s flow.State) (flow.Update, error) {
			turns, _ := s["history"].([]any)
			return flow.Update{
				"answer":  fmt.Sprintf("%s (turn %d)", s["question"], len(turns)+1),
				"spent":   s["spent"].(float64) + 10,
				"scratch": "used " + s["scratch"].(string),
			}, nil
		},
	}}
}

func TestConversationHistory(t *testing.T) {
	t.Parallel()
	clk := newClock()
	g := build(t, load(t, chat), flow.BuildOptions{Registry: chatRegistry(), Now: clk.now})
	var res flow.Result
	for i := 1; i <= 25; i++ {
		var err error
		res, err = g.Invoke(t.Context(), "ada", map[string]any{"question": fmt.Sprintf("q%d", i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	h := res.State["history"].([]any)
	if len(h) != flow.KeptTurns {
		t.Fatalf("history holds %d turns, want %d", len(h), flow.KeptTurns)
	}
	first := h[0].(map[string]any)
	last := h[len(h)-1].(map[string]any)
	want := map[string]any{"at": "2026-03-01T09:00:25Z", "asked": "q25", "answered": "q25 (turn 21)"}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("last turn (-want +got):\n%s", diff)
	}
	if first["asked"] != "q6" {
		t.Errorf("oldest turn kept asked %v, want q6", first["asked"])
	}

	// Each conversation keeps its own; nothing crosses between them.
	res, err := g.Invoke(t.Context(), "grace", map[string]any{"question": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.State["history"].([]any); len(h) != 1 || res.State["answer"] != "hello (turn 1)" {
		t.Errorf("another thread's history = %v, answer %v; want its own single turn", h, res.State["answer"])
	}
}

func TestConversationHistoryFromTheTranscript(t *testing.T) {
	t.Parallel()
	// The first turn of a thread this process has not been talking to is
	// handed the last turns out of the transcript; a turn already held
	// (matched on at) is not held twice.
	clk := newClock()
	g := build(t, load(t, chat), flow.BuildOptions{Registry: chatRegistry(), Now: clk.now})
	res, err := g.Invoke(t.Context(), "ada", map[string]any{"question": "q1"})
	if err != nil {
		t.Fatal(err)
	}
	held := res.State["history"].([]any)
	transcript := []any{
		map[string]any{"at": "2026-03-01T08:00:00Z", "asked": "older", "answered": "yes"},
		held[0],
	}
	res, err = g.Invoke(t.Context(), "ada", map[string]any{"question": "q2", "history": transcript})
	if err != nil {
		t.Fatal(err)
	}
	var asked []any
	for _, turn := range res.State["history"].([]any) {
		asked = append(asked, turn.(map[string]any)["asked"])
	}
	if diff := cmp.Diff([]any{"older", "q1", "q2"}, asked); diff != "" {
		t.Errorf("history asked (-want +got):\n%s", diff)
	}
}

func TestRemembers(t *testing.T) {
	t.Parallel()
	mem := &flow.MemoryCheckpointer{}
	g := build(t, load(t, chat), flow.BuildOptions{Registry: chatRegistry(), Memory: mem})
	for i, want := range []float64{10, 20, 30} {
		res, err := g.Invoke(t.Context(), "ada", map[string]any{"question": "q"})
		if err != nil {
			t.Fatal(err)
		}
		if res.State["spent"] != want {
			t.Errorf("message %d: spent = %v, want %v: a remembered channel carries across messages", i+1, res.State["spent"], want)
		}
		// Anything else starts again from its default.
		if res.State["scratch"] != "used fresh" {
			t.Errorf("message %d: scratch = %v, want it back at its default", i+1, res.State["scratch"])
		}
	}
	// A new value sent with a message still wins.
	res, err := g.Invoke(t.Context(), "ada", map[string]any{"question": "q", "spent": 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.State["spent"] != float64(110) {
		t.Errorf("spent = %v, want 110", res.State["spent"])
	}
	// Another thread starts from the default; a new Graph on the same
	// Memory remembers.
	res, err = g.Invoke(t.Context(), "grace", map[string]any{"question": "q"})
	if err != nil || res.State["spent"] != float64(10) {
		t.Errorf("another thread: spent = %v, %v; want 10", res.State["spent"], err)
	}
	g2 := build(t, load(t, chat), flow.BuildOptions{Registry: chatRegistry(), Memory: mem})
	res, err = g2.Invoke(t.Context(), "ada", map[string]any{"question": "q"})
	if err != nil || res.State["spent"] != float64(120) {
		t.Errorf("new Graph: spent = %v, %v; want 120", res.State["spent"], err)
	}
	if diff := cmp.Diff([]string{"ada", "grace"}, threads(t, mem)); diff != "" {
		t.Errorf("memory threads (-want +got):\n%s", diff)
	}
	if _, err := g.Invoke(t.Context(), "", map[string]any{"question": "q"}); err != flow.ErrNoThread {
		t.Errorf("Invoke with no thread = %v, want ErrNoThread", err)
	}
}

func TestRememberedAcrossAPause(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.9", "start": "ask",
		"state": { "name": { "remembers": true }, "greeting": {} },
		"nodes": [ { "id": "ask", "type": "ask", "ask": "Name? (was {{name}})", "output": "name" },
		           { "id": "greet", "handler": "greet" } ],
		"edges": [ { "from": "ask", "to": "greet" }, { "from": "greet", "to": "END" } ]
	}`)
	reg := flow.Registry{Handlers: map[string]flow.Handler{"greet": func(_ context.Context, s flow.State) (flow.Update, error) {
		return flow.Update{"greeting": "hello " + s["name"].(string)}, nil
	}}}
	cp, mem := &flow.MemoryCheckpointer{}, &flow.MemoryCheckpointer{}
	g := build(t, f, flow.BuildOptions{Registry: reg, Checkpointer: cp, Memory: mem})
	for i, name := range []string{"Ada", "Grace"} {
		res, err := g.Invoke(t.Context(), "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		wantQ := []string{"Name? (was )", "Name? (was Ada)"}[i]
		if res.Pending == nil || res.Pending.Question != wantQ {
			t.Fatalf("Pending = %+v, want question %q", res.Pending, wantQ)
		}
		if res, err = g.Resume(t.Context(), "t", name); err != nil || res.State["greeting"] != "hello "+name {
			t.Fatalf("Resume = %v, %v", res.State, err)
		}
	}
	if _, err := flow.Build(f, flow.BuildOptions{Registry: reg, Checkpointer: cp, Memory: cp}); err == nil {
		t.Error("Build with Memory the same as Checkpointer = nil error, want a refusal")
	}
}

func TestMemoryCheckpointer(t *testing.T) {
	t.Parallel()
	var m flow.MemoryCheckpointer
	ctx := t.Context()
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			thread := fmt.Sprintf("t%d", i)
			for j := range 100 {
				data := []byte(fmt.Sprint(j))
				if err := m.Put(ctx, thread, data); err != nil {
					t.Error(err)
					return
				}
				data[0] = 'x' // the store keeps its own copy
				got, ok, err := m.Get(ctx, thread)
				if err != nil || !ok || string(got) != fmt.Sprint(j) {
					t.Errorf("Get(%s) = %q, %v, %v; want %d", thread, got, ok, err, j)
					return
				}
				if _, err := m.Threads(ctx); err != nil {
					t.Error(err)
				}
			}
			if i%2 == 0 {
				if err := m.Delete(ctx, thread); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 8 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("timed out")
		}
	}
	if diff := cmp.Diff([]string{"t1", "t3", "t5", "t7"}, threads(t, &m)); diff != "" {
		t.Errorf("Threads (-want +got):\n%s", diff)
	}
	if _, ok, err := m.Get(ctx, "t0"); ok || err != nil {
		t.Errorf("Get of a deleted thread = %v, %v; want not there", ok, err)
	}
	if err := m.Delete(ctx, "never"); err != nil {
		t.Errorf("Delete of a thread that is not there = %v, want nil", err)
	}
}

// A finished run says what it was asked and answered, with the time its
// turn has in the conversation's history, so a transcript written from the
// result and the history agree on which turn is which.
func TestResultTurnIsTheHistorysTurn(t *testing.T) {
	t.Parallel()
	clk := newClock()
	g := build(t, load(t, chat), flow.BuildOptions{Registry: chatRegistry(), Now: clk.now})
	res, err := g.Invoke(t.Context(), "ada", map[string]any{"question": "q1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turn == nil {
		t.Fatal("a finished run has no Turn")
	}
	h := res.State["history"].([]any)
	if diff := cmp.Diff(h[len(h)-1], res.Turn.History()); diff != "" {
		t.Errorf("the history's turn and Result.Turn (-history +turn):\n%s", diff)
	}
	if res.Turn.Asked != "q1" || res.Turn.Answered != "q1 (turn 1)" {
		t.Errorf("Turn = %+v", *res.Turn)
	}
	// Handed back as input, the same turn is not held twice.
	res, err = g.Invoke(t.Context(), "ada", map[string]any{"question": "q2", "history": []any{res.Turn.History()}})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.State["history"].([]any); len(h) != 2 {
		t.Errorf("history holds %d turns after the first was handed back, want 2: %v", len(h), h)
	}
}
