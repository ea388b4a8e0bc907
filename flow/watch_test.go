package flow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

// watched records every event a graph's runs tell, as "kind node outcome".
type watched struct {
	mu     sync.Mutex
	lines  []string
	events []flow.Event
}

func (w *watched) watch(ctx context.Context, e flow.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if got := flow.RunOf(ctx); got != e.Run {
		w.lines = append(w.lines, fmt.Sprintf("RunOf(ctx) = %q, event's run %q", got, e.Run))
	}
	line := e.Kind.String()
	if e.Node != "" {
		line += " " + e.Node
	}
	if e.Outcome != "" {
		line += " " + e.Outcome
	}
	w.lines = append(w.lines, line)
	w.events = append(w.events, e)
}

func (w *watched) take() ([]string, []flow.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, e := w.lines, w.events
	w.lines, w.events = nil, nil
	return l, e
}

func TestWatchTellsEveryStep(t *testing.T) {
	t.Parallel()
	w := &watched{}
	cp := &flow.MemoryCheckpointer{}
	g := build(t, loadFile(t, "clarify.json"), flow.BuildOptions{Model: &testModel{}, Checkpointer: cp, Now: newClock().now, Watch: w.watch})

	res, err := g.Invoke(flow.WithRunID(t.Context(), "run-one"), "t1", map[string]any{"topic": "cats"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Run != "run-one" {
		t.Errorf("Result.Run = %q, want the id WithRunID gave", res.Run)
	}
	lines, events := w.take()
	want := []string{"run started", "node entered clarify", "node finished clarify paused", "run paused clarify"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("events of the first call (-want +got):\n%s", diff)
	}
	for _, e := range events {
		if e.Run != "run-one" || e.Thread != "t1" {
			t.Errorf("%v: run %q thread %q, want run-one and t1", e.Kind, e.Run, e.Thread)
		}
	}
	if p := events[3].Pending; p == nil || p.Kind != flow.PendingAsk {
		t.Errorf("run paused: Pending = %+v, want the ask", p)
	}

	// Resumed by another Graph over the same checkpointer: the same run.
	g2 := build(t, loadFile(t, "clarify.json"), flow.BuildOptions{Model: &testModel{}, Checkpointer: cp, Watch: w.watch})
	res, err = g2.Resume(t.Context(), "t1", "whiskers")
	if err != nil {
		t.Fatal(err)
	}
	if res.Run != "run-one" {
		t.Errorf("resumed Result.Run = %q, want run-one", res.Run)
	}
	lines, events = w.take()
	want = []string{"run resumed clarify", "node entered clarify", "node finished clarify ok",
		"node entered answer", "node finished answer ok", "run finished"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("events of the resume (-want +got):\n%s", diff)
	}
	if e := events[len(events)-1]; e.Steps != 2 || e.Run != "run-one" {
		t.Errorf("run finished: steps %d run %q, want 2 and run-one", e.Steps, e.Run)
	}
	if e := events[2]; e.NodeKind != flow.KindAsk || e.Copy != -1 {
		t.Errorf("node finished clarify: kind %q copy %d, want ask and -1", e.NodeKind, e.Copy)
	}
}

func TestWatchTellsFailures(t *testing.T) {
	t.Parallel()
	w := &watched{}
	reg := flow.Registry{Handlers: map[string]flow.Handler{"retrieve": fail("index unreachable")}, Routers: map[string]flow.Router{}}
	f := loadFile(t, "retrieve-escalate.json")
	g := build(t, f, flow.BuildOptions{Registry: reg, Model: &testModel{}, Watch: w.watch})
	if _, err := g.Invoke(t.Context(), "t", map[string]any{"question": "q"}); err != nil {
		t.Fatal(err)
	}
	lines, events := w.take()
	if !slicesContain(lines, "node finished retrieve failed") || lines[len(lines)-1] != "run finished" {
		t.Fatalf("events = %q: want retrieve failed, its onError taken, and the run finished", lines)
	}
	for _, e := range events {
		if e.Kind == flow.EventNodeFinished && e.Node == "retrieve" {
			if e.Err == nil || !strings.Contains(e.Err.Error(), "index unreachable") {
				t.Errorf("retrieve failed with %v, want the handler's error", e.Err)
			}
		}
	}
}

func TestStopEndsARunAtItsNextStep(t *testing.T) {
	t.Parallel()
	w := &watched{}
	entered := make(chan struct{})
	release := make(chan struct{})
	f := load(t, `{
	  "version": "0.8", "start": "one",
	  "state": { "n": { "type": "number", "description": "steps" } },
	  "nodes": [
	    { "id": "one", "handler": "slow" },
	    { "id": "two", "handler": "quick" }
	  ],
	  "edges": [ { "from": "one", "to": "two" }, { "from": "two", "to": "END" } ]
	}`)
	var twoRan bool
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"slow": func(ctx context.Context, s flow.State) (flow.Update, error) {
			close(entered)
			<-release
			return flow.Update{"n": 1}, nil
		},
		"quick": func(ctx context.Context, s flow.State) (flow.Update, error) {
			twoRan = true
			return flow.Update{"n": 2}, nil
		},
	}}
	g := build(t, f, flow.BuildOptions{Registry: reg, Watch: w.watch})
	if g.Stop("nobody", "why") {
		t.Error("Stop of a run that is not running reported one found")
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.Invoke(flow.WithRunID(t.Context(), "r1"), "t", nil)
		done <- err
	}()
	<-entered
	if got := g.Running(); !cmp.Equal(got, []string{"r1"}) {
		t.Errorf("Running() = %q, want [r1]", got)
	}
	if !g.Stop("r1", "the operator said so") {
		t.Fatal("Stop did not find the running run")
	}
	close(release)
	err := <-done
	if !errors.Is(err, flow.ErrStopped) || !strings.Contains(err.Error(), "the operator said so") {
		t.Fatalf("Invoke = %v, want ErrStopped with the reason", err)
	}
	if twoRan {
		t.Error("the node after the stop ran")
	}
	lines, _ := w.take()
	want := []string{"run started", "node entered one", "node finished one ok", "run stopped"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := g.Running(); len(got) != 0 {
		t.Errorf("Running() after the stop = %q, want none", got)
	}
}

// TestStopDuringTheStepThatPauses: a Stop that finds the run in the step
// that pauses it is not lost when the run comes to wait: the run ends
// stopped, and nothing waits on its thread. A Stop once it waits finds
// no run taking steps.
func TestStopDuringTheStepThatPauses(t *testing.T) {
	t.Parallel()
	w := &watched{}
	entered := make(chan struct{})
	release := make(chan struct{})
	f := load(t, `{
	  "version": "0.8", "start": "split",
	  "state": { "n": { "type": "number", "description": "work done" }, "ok": {} },
	  "nodes": [
	    { "id": "split", "handler": "nothing" },
	    { "id": "slow", "handler": "slow" },
	    { "id": "check", "type": "ask", "ask": "Go on?", "output": "ok" }
	  ],
	  "edges": [ { "from": "split", "to": "slow" }, { "from": "split", "to": "check" },
	             { "from": "slow", "to": "END" }, { "from": "check", "to": "END" } ]
	}`)
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"nothing": set(nil),
		"slow": func(ctx context.Context, s flow.State) (flow.Update, error) {
			close(entered)
			<-release
			return flow.Update{"n": 1}, nil
		},
	}}
	cp := &flow.MemoryCheckpointer{}
	g := build(t, f, flow.BuildOptions{Registry: reg, Checkpointer: cp, Watch: w.watch})
	done := make(chan error, 1)
	go func() {
		_, err := g.Invoke(flow.WithRunID(t.Context(), "r1"), "t", nil)
		done <- err
	}()
	<-entered
	if !g.Stop("r1", "not now") {
		t.Fatal("Stop did not find the run in its step")
	}
	close(release)
	if err := <-done; !errors.Is(err, flow.ErrStopped) || !strings.Contains(err.Error(), "not now") {
		t.Fatalf("Invoke = %v, want ErrStopped with the reason", err)
	}
	if p, err := g.Pending(t.Context(), "t"); err != nil || p != nil {
		t.Errorf("Pending after the stop = %v, %v; want nothing waiting", p, err)
	}
	lines, _ := w.take()
	if slicesContain(lines, "run paused") || lines[len(lines)-1] != "run stopped" {
		t.Errorf("events = %q; want the run stopped, never paused", lines)
	}

	// The same flow, stopped only once it waits: Stop finds nothing taking
	// steps, and the run waits on.
	entered, release = make(chan struct{}), make(chan struct{})
	close(release)
	res, err := g.Invoke(flow.WithRunID(t.Context(), "r2"), "t2", nil)
	if err != nil || res.Pending == nil {
		t.Fatalf("Invoke = %+v, %v; want it waiting", res, err)
	}
	if g.Stop("r2", "late") {
		t.Error("Stop found a run that waits")
	}
	if p, err := g.Pending(t.Context(), "t2"); err != nil || p == nil || p.Run != "r2" {
		t.Errorf("Pending = %v, %v; want r2 waiting", p, err)
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestStopBeforeTheRunBegins: a Stop of a reserved run that has not begun
// is answered yes, and the run, once invoked, ends stopped before its
// first step. A reservation let go leaves nothing for Stop to find.
func TestStopBeforeTheRunBegins(t *testing.T) {
	t.Parallel()
	w := &watched{}
	var ran bool
	f := load(t, `{
	  "version": "0.8", "start": "one",
	  "state": { "n": { "type": "number", "description": "steps" } },
	  "nodes": [ { "id": "one", "handler": "one" } ],
	  "edges": [ { "from": "one", "to": "END" } ]
	}`)
	reg := flow.Registry{Handlers: map[string]flow.Handler{"one": func(ctx context.Context, s flow.State) (flow.Update, error) {
		ran = true
		return flow.Update{"n": 1}, nil
	}}}
	g := build(t, f, flow.BuildOptions{Registry: reg, Watch: w.watch})
	release := g.Reserve("r1")
	defer release()
	if got := g.Running(); len(got) != 0 {
		t.Errorf("Running() with a run reserved = %q; want none taking steps", got)
	}
	if !g.Stop("r1", "changed my mind") {
		t.Fatal("Stop did not find the reserved run")
	}
	_, err := g.Invoke(flow.WithRunID(t.Context(), "r1"), "t", nil)
	if !errors.Is(err, flow.ErrStopped) || !strings.Contains(err.Error(), "changed my mind") {
		t.Fatalf("Invoke = %v, want ErrStopped with the reason", err)
	}
	if ran {
		t.Error("the node of a run stopped before it began ran")
	}
	lines, _ := w.take()
	if want := []string{"run started", "run stopped"}; !cmp.Equal(lines, want) {
		t.Errorf("events = %q, want %q", lines, want)
	}
	release()
	if g.Stop("r1", "again") {
		t.Error("Stop found a run that ended")
	}

	let := g.Reserve("r2")
	let()
	if g.Stop("r2", "late") {
		t.Error("Stop found a reservation let go")
	}
	if _, err := g.Invoke(flow.WithRunID(t.Context(), "r3"), "t", nil); err != nil || !ran {
		t.Errorf("an unreserved run = %v (ran %v); want it to run", err, ran)
	}
}
