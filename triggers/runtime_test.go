package triggers_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/triggers"
)

// loaded is f as the loader would give it, from a file in a fresh folder.
func loaded(t *testing.T, f triggers.File) *triggers.Loaded {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, triggers.FileName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := triggers.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// runs counts the runs a runtime starts, and can hold them.
type runs struct {
	mu     sync.Mutex
	starts []triggers.Start
	hold   chan struct{} // nil: runs end at once
	fail   error
	// started, when set, hears each run's id as it starts.
	started chan string
}

func (r *runs) run(ctx context.Context, s triggers.Start) (triggers.Result, error) {
	r.mu.Lock()
	r.starts = append(r.starts, s)
	hold, fail, started := r.hold, r.fail, r.started
	r.mu.Unlock()
	if started != nil {
		started <- s.RunID
	}
	if hold != nil {
		<-hold
	}
	return triggers.Result{Outputs: map[string]any{"answer": "42"}}, fail
}

func (r *runs) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.starts)
}

func (r *runs) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Time
	for _, s := range r.starts {
		out = append(out, s.At)
	}
	return out
}

// advance moves the bubble's clock on by d and lets what it woke settle.
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

func everyMinute(id string) triggers.Trigger {
	return triggers.Trigger{ID: id, Kind: triggers.KindSchedule, Schedule: "* * * * *", TimeZone: "UTC"}
}

func TestScheduleEveryMinuteStartsOneRunPerOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got runs
		rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{everyMinute("tick")}}), nil,
			triggers.Options{Run: got.run})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = rt.Run(ctx) }()
		synctest.Wait()
		if n := got.count(); n != 0 {
			t.Fatalf("%d runs before the first minute came round", n)
		}
		start := time.Now()
		advance(3*time.Minute + time.Second)
		if n := got.count(); n != 3 {
			t.Fatalf("after three minutes: %d runs, want 3 (one per occurrence)", n)
		}
		for i, at := range got.times() {
			if at.Second() != 0 || !at.After(start) {
				t.Errorf("run %d: occurrence at %s: want a whole minute after %s", i, at, start)
			}
		}
		rep := rt.Reports()[0]
		if rep.Last == nil || !rep.Last.OK || rep.Last.RunID == "" {
			t.Errorf("the latest occurrence: %+v, want an ok run", rep.Last)
		}
		if !rep.Next.After(time.Now()) {
			t.Errorf("next run %s: want after now %s", rep.Next, time.Now())
		}
		cancel()
		<-done
	})
}

func TestOverlapSkipStartsNothingWhileARunGoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := runs{hold: make(chan struct{})}
		rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{everyMinute("slow")}}), nil,
			triggers.Options{Run: got.run})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = rt.Run(ctx) }()
		// The first run takes three minutes: the two occurrences meanwhile
		// are skipped.
		advance(3*time.Minute + time.Second)
		if n := got.count(); n != 1 {
			t.Fatalf("%d runs started while the first still went: want 1 (skip)", n)
		}
		if last := rt.Reports()[0].Last; last == nil || last.RunID != "" || last.Error == "" {
			t.Errorf("the latest occurrence %+v: want one skipped, with no run and why", last)
		}
		close(got.hold)
		advance(time.Minute)
		if n := got.count(); n != 2 {
			t.Fatalf("%d runs once the first ended and the next minute came: want 2", n)
		}
		cancel()
		<-done
	})
}

func TestOverlapQueueWaitsItsTurnUpToItsLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := runs{hold: make(chan struct{})}
		hook := triggers.Trigger{ID: "q", Kind: triggers.KindWebhook, Path: "/q", Overlap: triggers.OverlapQueue, QueueLimit: 1}
		rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{hook}}), nil,
			triggers.Options{Run: got.run})
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 3)
		for range 2 {
			go func() { _, err := rt.Occur(t.Context(), "q", triggers.Occurrence{}, time.Time{}); errs <- err }()
			synctest.Wait()
		}
		// A third finds the queue full.
		if _, err := rt.Occur(t.Context(), "q", triggers.Occurrence{}, time.Time{}); !errors.Is(err, triggers.ErrSkipped) {
			t.Fatalf("past the queue's limit: %v, want ErrSkipped", err)
		}
		if n := got.count(); n != 1 {
			t.Fatalf("%d runs going: want 1, one waiting", n)
		}
		close(got.hold)
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("a queued occurrence: %v", err)
			}
		}
		if n := got.count(); n != 2 {
			t.Errorf("%d runs: want 2 (the one queued ran after the first)", n)
		}
	})
}

func TestCatchUpRunsTheLatestMissedOnceAndOnlyWhenAsked(t *testing.T) {
	for _, catchUp := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "trigger-state.json")
			// The agent last saw the 23:50 occurrence; it is now midnight:
			// nine were missed.
			last := time.Now().Add(-10 * time.Minute)
			data, _ := json.Marshal(map[string]any{"last": map[string]time.Time{"tick": last}})
			if err := os.WriteFile(state, data, 0o600); err != nil {
				t.Fatal(err)
			}
			tr := everyMinute("tick")
			tr.CatchUp = catchUp
			var got runs
			rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{tr}}), nil,
				triggers.Options{Run: got.run, StatePath: state})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); _ = rt.Run(ctx) }()
			synctest.Wait()
			want := 0
			if catchUp {
				want = 1
			}
			if n := got.count(); n != want {
				t.Fatalf("catchUp %v: %d runs at start, want %d", catchUp, n, want)
			}
			if catchUp {
				if at := got.times()[0]; !at.Equal(time.Now().Truncate(time.Minute)) {
					t.Errorf("caught up the occurrence at %s: want the latest missed, %s", at, time.Now().Truncate(time.Minute))
				}
			}
			advance(time.Minute + time.Second)
			if n := got.count(); n != want+1 {
				t.Errorf("catchUp %v: %d runs a minute on, want %d", catchUp, n, want+1)
			}
			cancel()
			<-done
			// What was seen is kept, for the next start.
			var kept struct{ Last map[string]time.Time }
			data, _ = os.ReadFile(state)
			if err := json.Unmarshal(data, &kept); err != nil || !kept.Last["tick"].After(last) {
				t.Errorf("the state file %s: want tick's latest occurrence after %s", data, last)
			}
		})
	}
}

func TestPausedAgentOrTriggerStartsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got runs
		var mu sync.Mutex
		agentPaused := true
		rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{everyMinute("tick")}}), nil,
			triggers.Options{Run: got.run, AgentPaused: func() bool { mu.Lock(); defer mu.Unlock(); return agentPaused }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = rt.Run(ctx) }()
		advance(3 * time.Minute)
		if n := got.count(); n != 0 {
			t.Fatalf("a paused agent started %d runs", n)
		}
		if next := rt.Reports()[0].Next; !next.IsZero() {
			t.Errorf("a paused agent reports the next run at %s: want none", next)
		}
		mu.Lock()
		agentPaused = false
		mu.Unlock()
		rt.SetPaused([]string{"tick", "not-in-the-file"})
		advance(3 * time.Minute)
		if n := got.count(); n != 0 {
			t.Fatalf("a paused trigger started %d runs", n)
		}
		if rep := rt.Reports()[0]; !rep.Paused || !rep.Next.IsZero() {
			t.Errorf("a paused trigger reports %+v: want paused, with no next run", rep)
		}
		rt.SetPaused(nil)
		synctest.Wait()
		if n := got.count(); n != 0 {
			t.Fatalf("resuming replayed %d missed occurrences: want none", n)
		}
		advance(time.Minute)
		if n := got.count(); n != 1 {
			t.Errorf("%d runs a minute after the resume: want 1", n)
		}
		cancel()
		<-done
	})
}

func TestNewRuntimeRefusesAMissingSecretOrURL(t *testing.T) {
	for _, tr := range []triggers.Trigger{
		{ID: "signed", Kind: triggers.KindWebhook, Path: "/s", Secret: "HOOK_SECRET"},
		{ID: "tell", Kind: triggers.KindWebhook, Path: "/t", Deliver: &triggers.Delivery{URLEnv: "SLACK_URL"}},
	} {
		_, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{tr}}), nil,
			triggers.Options{Run: (&runs{}).run, Getenv: func(string) string { return "" }})
		if err == nil {
			t.Errorf("%s: started with its variable unset", tr.ID)
		}
	}
}

// TestOverlapQueueOfASchedule: with "queue" and a limit of 1, a minute that
// comes while the run of the one before still goes waits its turn, and a
// third, with the queue full, is skipped, saying why; once the long run
// ends, the queued one runs, at its own occurrence time.
func TestOverlapQueueOfASchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := runs{hold: make(chan struct{})}
		tr := everyMinute("queued")
		tr.Overlap, tr.QueueLimit = triggers.OverlapQueue, 1
		rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{tr}}), nil,
			triggers.Options{Run: got.run})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = rt.Run(ctx) }()
		advance(time.Minute + time.Second) // the first occurrence: its run holds
		advance(time.Minute)               // the second: queued
		if n := got.count(); n != 1 {
			t.Fatalf("%d runs started, want 1 while it holds", n)
		}
		advance(time.Minute) // the third: the queue is full
		if last := rt.Reports()[0].Last; last == nil || last.RunID != "" || !strings.Contains(last.Error, "skipped") {
			t.Errorf("the third occurrence %+v: want skipped, the queue full, saying so", last)
		}
		close(got.hold)
		synctest.Wait()
		times := got.times()
		if len(times) != 2 || times[1].Sub(times[0]) != time.Minute {
			t.Errorf("runs at %v: want the first and the queued second, a minute apart", times)
		}
		cancel()
		<-done
	})
}
