package waiting

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreUpdated leaves Updated out of a comparison: the memory notes stamp it
// with the wall clock. Tests that care check it on their own.
var ignoreUpdated = cmpopts.IgnoreFields(Note{}, "Updated")

// paused is a moment with no more than millisecond precision, as the store
// keeps it.
var paused = time.Date(2026, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// eachHolding runs f, in parallel subtests, against the holding notes of a
// store opened in a temporary folder and against MemoryHolding.
func eachHolding(t *testing.T, f func(t *testing.T, h Holding)) {
	t.Helper()
	for _, name := range []string{"store", "memory"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var h Holding
			if name == "store" {
				h = HoldingOf(openStore(t, t.TempDir(), Config{}))
				if _, ok := h.(storeHolding); !ok {
					t.Fatalf("HoldingOf(a *Store) = %T, want storeHolding", h)
				}
			} else {
				h = &MemoryHolding{}
			}
			f(t, h)
		})
	}
}

func hold(t *testing.T, h Holding, n Note) {
	t.Helper()
	if err := h.Hold(t.Context(), n); err != nil {
		t.Fatalf("Hold(%s/%s) = %v", n.Run, n.Node, err)
	}
}

func fullNote() Note {
	return Note{
		Run:    "run-1",
		Thread: "thread-1",
		Node:   "approve",
		Ask:    "Pay the invoice?",
		Show: map[string]any{
			"amount":   1200,
			"currency": "EUR",
			"rate":     0.25,
			"paid":     false,
			"nothing":  nil,
			"lines":    []any{"a", 2, map[string]any{"n": int64(3)}},
			"supplier": map[string]any{"name": "Acme", "vat": map[string]any{"id": "FR1", "rate": 20}},
		},
		Account:    "It was ordered and delivered.",
		Digest:     "sha256:abc",
		State:      Held,
		Rule:       "rule-7",
		ApprovalID: "appr-42",
		Why:        "",
		At:         paused,
	}
}

// wantFull is fullNote as it comes back: Show through JSON.
func wantFull() Note {
	n := fullNote()
	n.Show = map[string]any{
		"amount":   float64(1200),
		"currency": "EUR",
		"rate":     0.25,
		"paid":     false,
		"nothing":  nil,
		"lines":    []any{"a", float64(2), map[string]any{"n": float64(3)}},
		"supplier": map[string]any{"name": "Acme", "vat": map[string]any{"id": "FR1", "rate": float64(20)}},
	}
	return n
}

func TestHoldingRoundTrip(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		ctx := t.Context()
		if _, ok, err := h.Find(ctx, "run-1", "approve"); ok || err != nil {
			t.Fatalf("Find() before Hold = ok %v, %v; want not ok", ok, err)
		}
		if _, ok, err := h.Note(ctx, "thread-1"); ok || err != nil {
			t.Fatalf("Note() before Hold = ok %v, %v; want not ok", ok, err)
		}
		before := time.Now().Add(-time.Second)
		hold(t, h, fullNote())
		want := wantFull()

		got, ok, err := h.Find(ctx, "run-1", "approve")
		if err != nil || !ok {
			t.Fatalf("Find() = ok %v, %v; want the note", ok, err)
		}
		if diff := cmp.Diff(want, got, ignoreUpdated); diff != "" {
			t.Errorf("Find() (-want +got):\n%s", diff)
		}
		if got.Updated.Before(before) {
			t.Errorf("Find().Updated = %v, want about now", got.Updated)
		}

		got, ok, err = h.Note(ctx, "thread-1")
		if err != nil || !ok {
			t.Fatalf("Note() = ok %v, %v; want the note", ok, err)
		}
		if diff := cmp.Diff(want, got, ignoreUpdated); diff != "" {
			t.Errorf("Note() (-want +got):\n%s", diff)
		}

		for _, q := range [][2]string{{"run-1", "other"}, {"run-2", "approve"}} {
			if _, ok, err := h.Find(ctx, q[0], q[1]); ok || err != nil {
				t.Errorf("Find(%s, %s) = ok %v, %v; want not ok", q[0], q[1], ok, err)
			}
		}
		if _, ok, err := h.Note(ctx, "thread-2"); ok || err != nil {
			t.Errorf("Note(thread-2) = ok %v, %v; want not ok", ok, err)
		}
	})
}

func TestHoldingRoundTripEmpty(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		ctx := t.Context()
		before := time.Now().Add(-time.Second)
		// No Show, no At: At becomes now.
		hold(t, h, Note{Run: "r", Node: "n", Thread: "t", State: Asking})
		got, ok, err := h.Find(ctx, "r", "n")
		if err != nil || !ok {
			t.Fatalf("Find() = ok %v, %v; want the note", ok, err)
		}
		if got.Show != nil {
			t.Errorf("Find().Show = %#v, want nil", got.Show)
		}
		if got.At.Before(before) || got.At.After(time.Now().Add(time.Second)) {
			t.Errorf("Find().At = %v, want about now (Hold without At)", got.At)
		}
		if got.Updated.Before(before) {
			t.Errorf("Find().Updated = %v, want about now", got.Updated)
		}
		want := Note{Run: "r", Node: "n", Thread: "t", State: Asking}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Note{}, "At", "Updated")); diff != "" {
			t.Errorf("Find() (-want +got):\n%s", diff)
		}
	})
}

func TestHoldingHoldReplaces(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		ctx := t.Context()
		hold(t, h, fullNote())
		second := Note{
			Run: "run-1", Node: "approve", Thread: "thread-2", Ask: "Pay half?",
			Show: map[string]any{"amount": 600}, State: Card, At: paused.Add(time.Minute),
		}
		hold(t, h, second)
		got, ok, err := h.Find(ctx, "run-1", "approve")
		if err != nil || !ok {
			t.Fatalf("Find() = ok %v, %v; want the note", ok, err)
		}
		want := second
		want.Show = map[string]any{"amount": float64(600)}
		if diff := cmp.Diff(want, got, ignoreUpdated); diff != "" {
			t.Errorf("Find() after the second Hold (-want +got):\n%s", diff)
		}
		all, err := h.Notes(ctx, Asking, Held, Card, Tombstone)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 {
			t.Errorf("Notes() = %d notes, want 1 (Hold replaces)", len(all))
		}
		if _, ok, err := h.Note(ctx, "thread-1"); ok || err != nil {
			t.Errorf("Note(thread-1) = ok %v, %v; want not ok: the note moved to thread-2", ok, err)
		}
	})
}

func TestHoldingNoteNewest(t *testing.T) {
	t.Parallel()
	type held struct {
		run, thread string
		state       NoteState
		ago         time.Duration // At, before paused
	}
	tests := []struct {
		name  string
		holds []held // in the order held
		want  string // run; "" means none
	}{
		{
			name:  "one",
			holds: []held{{"a", "t", Held, 0}},
			want:  "a",
		},
		{
			name:  "newest by At, not by the order held",
			holds: []held{{"new", "t", Asking, time.Minute}, {"old", "t", Held, time.Hour}, {"older", "t", Card, 2 * time.Hour}},
			want:  "new",
		},
		{
			name:  "a newer tombstone is skipped",
			holds: []held{{"live", "t", Card, time.Hour}, {"dead", "t", Tombstone, 0}},
			want:  "live",
		},
		{
			name:  "a newer withdrawn note is skipped",
			holds: []held{{"live", "t", Held, time.Hour}, {"withdrawn", "t", Withdrawn, 0}},
			want:  "live",
		},
		{
			name:  "only tombstones",
			holds: []held{{"dead", "t", Tombstone, 0}, {"dead2", "t", Withdrawn, time.Hour}},
			want:  "",
		},
		{
			name:  "other threads are not looked at",
			holds: []held{{"mine", "t", Held, time.Hour}, {"theirs", "u", Held, 0}},
			want:  "mine",
		},
		{
			name:  "none",
			holds: []held{{"theirs", "u", Held, 0}},
			want:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachHolding(t, func(t *testing.T, h Holding) {
				for _, n := range tt.holds {
					hold(t, h, Note{Run: n.run, Node: "approve", Thread: n.thread, State: n.state, At: paused.Add(-n.ago)})
				}
				got, ok, err := h.Note(t.Context(), "t")
				if err != nil {
					t.Fatalf("Note(t) = %v", err)
				}
				if tt.want == "" {
					if ok {
						t.Errorf("Note(t) = %s (%s), want none", got.Run, got.State)
					}
					return
				}
				if !ok || got.Run != tt.want {
					t.Errorf("Note(t) = %q, ok %v; want %q", got.Run, ok, tt.want)
				}
			})
		})
	}
}

func TestHoldingNotes(t *testing.T) {
	t.Parallel()
	notes := []Note{ // held in this order, At not in order
		{Run: "c", Node: "n", Thread: "t1", State: Held, At: paused.Add(3 * time.Minute)},
		{Run: "a", Node: "n", Thread: "t2", State: Asking, At: paused.Add(1 * time.Minute)},
		{Run: "e", Node: "n", Thread: "t1", State: Tombstone, At: paused.Add(5 * time.Minute)},
		{Run: "b", Node: "n", Thread: "t3", State: Card, At: paused.Add(2 * time.Minute)},
		{Run: "d", Node: "y", Thread: "t2", State: Held, At: paused.Add(4 * time.Minute)},
		{Run: "d", Node: "x", Thread: "t2", State: Held, At: paused.Add(4 * time.Minute)}, // same At: by run, then node
		{Run: "0", Node: "n", Thread: "t4", State: Held, At: paused},
	}
	tests := []struct {
		name   string
		states []NoteState
		want   []string // run/node
	}{
		{"no states", nil, nil},
		{"held", []NoteState{Held}, []string{"0/n", "c/n", "d/x", "d/y"}},
		{"asking", []NoteState{Asking}, []string{"a/n"}},
		{"tombstone", []NoteState{Tombstone}, []string{"e/n"}},
		{"held and card", []NoteState{Card, Held}, []string{"0/n", "b/n", "c/n", "d/x", "d/y"}},
		{"all", []NoteState{Asking, Held, Card, Tombstone}, []string{"0/n", "a/n", "b/n", "c/n", "d/x", "d/y", "e/n"}},
		{"an unknown state", []NoteState{"pending"}, nil},
	}
	eachHolding(t, func(t *testing.T, h Holding) {
		for _, n := range notes {
			hold(t, h, n)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := h.Notes(t.Context(), tt.states...)
				if err != nil {
					t.Fatalf("Notes(%v) = %v", tt.states, err)
				}
				var runs []string
				for _, n := range got {
					if !slices.Contains(tt.states, n.State) {
						t.Errorf("Notes(%v) gave %s/%s in state %s", tt.states, n.Run, n.Node, n.State)
					}
					runs = append(runs, n.Run+"/"+n.Node)
				}
				if diff := cmp.Diff(tt.want, runs); diff != "" {
					t.Errorf("Notes(%v) (-want +got):\n%s", tt.states, diff)
				}
			})
		}
	})
}

func TestHoldingHoldRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		note Note
		want string // in the error
	}{
		{"no run", Note{Node: "n", Thread: "t", State: Held}, "no run"},
		{"no node", Note{Run: "r", Thread: "t", State: Held}, "no node"},
		{"no state", Note{Run: "r", Node: "n", Thread: "t"}, "no such state"},
		{"an unknown state", Note{Run: "r", Node: "n", Thread: "t", State: "pending"}, `"pending"`},
		{"a state in the wrong case", Note{Run: "r", Node: "n", Thread: "t", State: "Held"}, `"Held"`},
	}
	eachHolding(t, func(t *testing.T, h Holding) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := h.Hold(t.Context(), tt.note)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Hold(%s) = %v, want an error naming %s", tt.name, err, tt.want)
				}
			})
		}
		all, err := h.Notes(t.Context(), Asking, Held, Card, Tombstone, "pending", "Held", "")
		if err != nil || len(all) != 0 {
			t.Errorf("Notes() after refused Holds = %d notes, %v; want none", len(all), err)
		}
	})
}

func TestHoldingSwap(t *testing.T) {
	t.Parallel()
	type step struct {
		from, to  NoteState
		why       string
		want      bool
		wantErr   bool
		wantState NoteState // after; "" means no note
		wantWhy   string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "from the right state, once",
			steps: []step{
				{from: Held, to: Card, why: "not governed", want: true, wantState: Card, wantWhy: "not governed"},
				{from: Held, to: Card, why: "again", want: false, wantState: Card, wantWhy: "not governed"},
			},
		},
		{
			name: "from the wrong state",
			steps: []step{
				{from: Asking, to: Card, why: "x", want: false, wantState: Held},
				{from: Card, to: "", want: false, wantState: Held},
				{from: "", to: Card, want: false, wantState: Held},
			},
		},
		{
			name: "to nothing deletes",
			steps: []step{
				{from: Held, to: "", want: true, wantState: ""},
				{from: Held, to: "", want: false, wantState: ""},
				{from: Held, to: Card, want: false, wantState: ""},
			},
		},
		{
			name: "to an unknown state",
			steps: []step{
				{from: Held, to: "pending", wantErr: true, wantState: Held},
				{from: Asking, to: "pending", wantErr: true, wantState: Held},
			},
		},
		{
			name: "to a tombstone and on",
			steps: []step{
				{from: Held, to: Tombstone, why: "cancelled", want: true, wantState: Tombstone, wantWhy: "cancelled"},
				{from: Tombstone, to: "", want: true, wantState: ""},
			},
		},
		{
			name: "along the states",
			steps: []step{
				{from: Held, to: Asking, why: "board gone", want: true, wantState: Asking, wantWhy: "board gone"},
				{from: Asking, to: Held, why: "", want: true, wantState: Held, wantWhy: ""},
				{from: Held, to: Held, why: "same", want: true, wantState: Held, wantWhy: "same"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachHolding(t, func(t *testing.T, h Holding) {
				ctx := t.Context()
				hold(t, h, fullNote())
				// A bystander on the same thread and run is not moved.
				other := fullNote()
				other.Node = "other"
				hold(t, h, other)
				for i, s := range tt.steps {
					got, err := h.Swap(ctx, "run-1", "approve", s.from, s.to, s.why)
					if s.wantErr {
						if err == nil || !strings.Contains(err.Error(), string(s.to)) {
							t.Errorf("step %d: Swap(%q→%q) = %v, %v; want an error naming %q", i, s.from, s.to, got, err, s.to)
						}
						if got {
							t.Errorf("step %d: Swap(%q→%q) reported true with an error", i, s.from, s.to)
						}
					} else if err != nil || got != s.want {
						t.Errorf("step %d: Swap(%q→%q) = %v, %v; want %v", i, s.from, s.to, got, err, s.want)
					}
					n, ok, err := h.Find(ctx, "run-1", "approve")
					if err != nil {
						t.Fatal(err)
					}
					switch {
					case s.wantState == "" && ok:
						t.Errorf("step %d: after Swap the note is %s, want none", i, n.State)
					case s.wantState != "" && !ok:
						t.Errorf("step %d: after Swap there is no note, want one in %s", i, s.wantState)
					case ok && (n.State != s.wantState || n.Why != s.wantWhy):
						t.Errorf("step %d: after Swap the note is %q (why %q), want %q (why %q)", i, n.State, n.Why, s.wantState, s.wantWhy)
					case ok:
						// Swap changes the state and why only.
						want := wantFull()
						want.State, want.Why = n.State, n.Why
						if diff := cmp.Diff(want, n, ignoreUpdated); diff != "" {
							t.Errorf("step %d: after Swap (-want +got):\n%s", i, diff)
						}
					}
				}
				if n, ok, err := h.Find(ctx, "run-1", "other"); err != nil || !ok || n.State != Held || n.Why != "" {
					t.Errorf("Find(the bystander) = %s %q, %v, %v; want it held, untouched", n.State, n.Why, ok, err)
				}
			})
		})
	}
}

func TestHoldingSwapMissing(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		if got, err := h.Swap(t.Context(), "nobody", "n", Held, Card, ""); got || err != nil {
			t.Errorf("Swap(no note) = %v, %v; want false, nil", got, err)
		}
		if got, err := h.Swap(t.Context(), "nobody", "n", Held, "", ""); got || err != nil {
			t.Errorf("Swap(no note → \"\") = %v, %v; want false, nil", got, err)
		}
	})
}

// TestHoldingSwapOnce: of many Swaps from one state at once, exactly one
// succeeds. Run it with -race.
func TestHoldingSwapOnce(t *testing.T) {
	t.Parallel()
	for _, to := range []NoteState{"", Card} {
		t.Run(fmt.Sprintf("to %q", to), func(t *testing.T) {
			t.Parallel()
			eachHolding(t, func(t *testing.T, h Holding) {
				ctx := t.Context()
				hold(t, h, fullNote())
				const n = 50
				var (
					wg    sync.WaitGroup
					wins  atomic.Int32
					start = make(chan struct{})
					errs  = make(chan error, n)
				)
				for i := range n {
					wg.Go(func() {
						<-start
						ok, err := h.Swap(ctx, "run-1", "approve", Held, to, fmt.Sprint("swapper ", i))
						if err != nil {
							errs <- err
						}
						if ok {
							wins.Add(1)
						}
					})
				}
				close(start)
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("Swap() = %v", err)
				}
				if got := wins.Load(); got != 1 {
					t.Errorf("%d of %d concurrent Swaps(held→%q) succeeded, want exactly 1", got, n, to)
				}
				got, ok, err := h.Find(ctx, "run-1", "approve")
				if err != nil {
					t.Fatal(err)
				}
				if to == "" && ok {
					t.Errorf("after the Swaps the note is %s, want none", got.State)
				}
				if to != "" && (!ok || got.State != to) {
					t.Errorf("after the Swaps the note is %q (ok %v), want %q", got.State, ok, to)
				}
			})
		})
	}
}

func TestHoldingForget(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		ctx := t.Context()
		hold(t, h, Note{Run: "r1", Node: "a", Thread: "t1", State: Held, At: paused})
		hold(t, h, Note{Run: "r1", Node: "b", Thread: "t1", State: Card, At: paused.Add(time.Second)})
		hold(t, h, Note{Run: "r0", Node: "a", Thread: "t1", State: Tombstone, At: paused.Add(-time.Hour)})
		hold(t, h, Note{Run: "r2", Node: "a", Thread: "t2", State: Held, At: paused.Add(time.Minute)})
		hold(t, h, Note{Run: "r3", Node: "a", Thread: "t2", State: Tombstone, At: paused.Add(2 * time.Minute)})
		hold(t, h, Note{Run: "r4", Node: "a", Thread: "t1x", State: Asking, At: paused.Add(3 * time.Minute)})
		if err := h.Forget(ctx, "t1"); err != nil {
			t.Fatalf("Forget(t1) = %v", err)
		}
		if err := h.Forget(ctx, "nobody"); err != nil {
			t.Fatalf("Forget(nobody) = %v; forgetting nothing is not an error", err)
		}
		got, err := h.Notes(ctx, Asking, Held, Card, Tombstone)
		if err != nil {
			t.Fatal(err)
		}
		var runs []string
		for _, n := range got {
			runs = append(runs, n.Run+"/"+n.Node+"@"+n.Thread)
		}
		if diff := cmp.Diff([]string{"r2/a@t2", "r3/a@t2", "r4/a@t1x"}, runs); diff != "" {
			t.Errorf("Notes() after Forget(t1) (-want +got):\n%s", diff)
		}
		if _, ok, err := h.Note(ctx, "t1"); ok || err != nil {
			t.Errorf("Note(t1) after Forget = ok %v, %v; want not ok", ok, err)
		}
		if _, ok, err := h.Find(ctx, "r0", "a"); ok || err != nil {
			t.Errorf("Find(the tombstone of t1) after Forget = ok %v, %v; want forgotten", ok, err)
		}
	})
}

// TestHoldingShowIsACopy: what the caller does with a map it gave or got
// does not change the note kept.
func TestHoldingShowIsACopy(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		ctx := t.Context()
		n := fullNote()
		hold(t, h, n)
		// The map given to Hold.
		n.Show["amount"] = 1
		n.Show["supplier"].(map[string]any)["name"] = "Evil"
		n.Show["lines"].([]any)[0] = "z"

		mutate := func(what string, got Note, ok bool, err error) {
			t.Helper()
			if err != nil || !ok {
				t.Fatalf("%s = ok %v, %v", what, ok, err)
			}
			got.Show["amount"] = float64(1_000_000)
			got.Show["new"] = "added"
			delete(got.Show, "currency")
			got.Show["supplier"].(map[string]any)["name"] = "Evil"
			got.Show["supplier"].(map[string]any)["vat"].(map[string]any)["rate"] = float64(0)
			got.Show["lines"].([]any)[0] = "z"
		}
		got, ok, err := h.Find(ctx, "run-1", "approve")
		mutate("Find()", got, ok, err)
		got, ok, err = h.Note(ctx, "thread-1")
		mutate("Note()", got, ok, err)
		all, err := h.Notes(ctx, Held)
		if err != nil || len(all) != 1 {
			t.Fatalf("Notes(held) = %d notes, %v; want 1", len(all), err)
		}
		mutate("Notes()", all[0], true, nil)

		got, ok, err = h.Find(ctx, "run-1", "approve")
		if err != nil || !ok {
			t.Fatalf("Find() = ok %v, %v", ok, err)
		}
		if diff := cmp.Diff(wantFull().Show, got.Show); diff != "" {
			t.Errorf("Show after the caller changed its copies (-want +got):\n%s", diff)
		}
	})
}

// A Show that JSON cannot encode is refused by both, never kept as nil:
// what was put in front of the person must not be lost.
func TestHoldingRefusesAnUnencodableShow(t *testing.T) {
	t.Parallel()
	eachHolding(t, func(t *testing.T, h Holding) {
		n := fullNote()
		n.Show = map[string]any{"amount": 1200, "callback": func() {}}
		err := h.Hold(t.Context(), n)
		if err == nil {
			got, ok, _ := h.Find(t.Context(), n.Run, n.Node)
			t.Errorf("Hold(a Show JSON cannot encode) = nil; the note kept (ok %v) shows %#v: what was shown is lost", ok, got.Show)
		}
	})
}

func TestHoldingOfMemory(t *testing.T) {
	t.Parallel()
	if h, ok := HoldingOf(newMemory(nil)).(*MemoryHolding); !ok || h == nil {
		t.Errorf("HoldingOf(a memory checkpointer) = %T, want *MemoryHolding", h)
	}
}

// The rest is the store's alone: it outlives the process.

func TestHoldingDurable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	c := &clock{now: paused.Add(time.Hour)}
	s, err := Open(ctx, dir, Config{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "thread-1", []byte("paused")); err != nil {
		t.Fatal(err)
	}
	hold(t, HoldingOf(s), fullNote())
	tomb := Note{Run: "run-0", Node: "approve", Thread: "thread-1", State: Tombstone, Why: "cancelled", At: paused.Add(-time.Hour)}
	hold(t, HoldingOf(s), tomb)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Hour)
	h := HoldingOf(openStore(t, dir, Config{Now: c.Now}))
	got, ok, err := h.Find(ctx, "run-1", "approve")
	if err != nil || !ok {
		t.Fatalf("Find() after reopening = ok %v, %v; want the note", ok, err)
	}
	want := wantFull()
	want.Updated = paused.Add(time.Hour) // stamped by the store's clock
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Find() after reopening (-want +got):\n%s", diff)
	}
	got, ok, err = h.Find(ctx, "run-0", "approve")
	tomb.Updated = paused.Add(time.Hour)
	if err != nil || !ok {
		t.Fatalf("Find(the tombstone) after reopening = ok %v, %v; want it", ok, err)
	}
	if diff := cmp.Diff(tomb, got); diff != "" {
		t.Errorf("Find(the tombstone) after reopening (-want +got):\n%s", diff)
	}
}

// TestHoldingSwapStamps: the store stamps Updated with its clock on Swap.
func TestHoldingSwapStamps(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &clock{now: paused}
	h := HoldingOf(openStore(t, t.TempDir(), Config{Now: c.Now}))
	hold(t, h, fullNote())
	c.advance(time.Minute)
	if ok, err := h.Swap(ctx, "run-1", "approve", Held, Card, "not governed"); !ok || err != nil {
		t.Fatalf("Swap() = %v, %v", ok, err)
	}
	got, _, err := h.Find(ctx, "run-1", "approve")
	if err != nil {
		t.Fatal(err)
	}
	if !got.At.Equal(paused) || !got.Updated.Equal(paused.Add(time.Minute)) {
		t.Errorf("after Swap At, Updated = %v, %v; want %v, %v", got.At, got.Updated, paused, paused.Add(time.Minute))
	}
}

func TestHoldingForgottenOnOpen(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	type note struct {
		run     string
		state   NoteState
		ago     time.Duration // held, before now
		swapAgo time.Duration // if not 0: swapped to the same state then
	}
	tests := []struct {
		name     string
		keepDays int
		put      time.Duration // the thread's checkpoint, before now; -1: none
		deleted  bool          // the checkpoint is deleted before closing
		notes    []note
		want     []string // runs kept
	}{
		{
			name:  "the thread has a checkpoint",
			put:   0,
			notes: []note{{"asking", Asking, day, 0}, {"held", Held, day, 0}, {"card", Card, day, 0}, {"dead", Tombstone, day, 0}},
			want:  []string{"asking", "card", "dead", "held"},
		},
		{
			name:  "the thread has no checkpoint",
			put:   -1,
			notes: []note{{"asking", Asking, 0, 0}, {"held", Held, 0, 0}, {"card", Card, 0, 0}, {"dead", Tombstone, 0, 0}},
			want:  []string{"dead"},
		},
		{
			name:    "the checkpoint was deleted",
			put:     0,
			deleted: true,
			notes:   []note{{"held", Held, 0, 0}, {"dead", Tombstone, 0, 0}},
			want:    []string{"dead"},
		},
		{
			// The board is yet to be told of it.
			name:    "the checkpoint of a withdrawn run was deleted",
			put:     0,
			deleted: true,
			notes:   []note{{"withdrawn", Withdrawn, 0, 0}, {"card", Card, 0, 0}},
			want:    []string{"withdrawn"},
		},
		{
			name:  "the checkpoint was forgotten for its age",
			put:   31 * day,
			notes: []note{{"held", Held, day, 0}, {"dead", Tombstone, day, 0}},
			want:  []string{"dead"},
		},
		{
			name:  "untouched notes, default thirty days",
			put:   0,
			notes: []note{{"held31", Held, 31 * day, 0}, {"held30", Held, 30 * day, 0}, {"held29", Held, 29 * day, 0}, {"dead31", Tombstone, 31 * day, 0}, {"dead29", Tombstone, 29 * day, 0}},
			want:  []string{"dead29", "held29"},
		},
		{
			name:  "untouched tombstones without a checkpoint",
			put:   -1,
			notes: []note{{"dead31", Tombstone, 31 * day, 0}, {"dead29", Tombstone, 29 * day, 0}},
			want:  []string{"dead29"},
		},
		{
			name:     "seven days",
			keepDays: 7,
			put:      0,
			notes:    []note{{"held8", Held, 8 * day, 0}, {"held6", Held, 6 * day, 0}, {"dead8", Tombstone, 8 * day, 0}, {"dead6", Tombstone, 6 * day, 0}},
			want:     []string{"dead6", "held6"},
		},
		{
			name:  "a Swap touches the note",
			put:   0,
			notes: []note{{"swapped", Held, 60 * day, 2 * day}, {"dead", Tombstone, 60 * day, 2 * day}, {"old", Held, 60 * day, 0}},
			want:  []string{"dead", "swapped"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dir := t.TempDir()
			c := &clock{now: now.Add(-365 * day)}
			opts := Config{Now: c.Now, KeepDays: tt.keepDays}
			s, err := Open(ctx, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			h := HoldingOf(s)
			for _, n := range tt.notes {
				c.set(now.Add(-n.ago))
				hold(t, h, Note{Run: n.run, Node: "approve", Thread: "t", State: n.state, At: now.Add(-n.ago)})
			}
			for _, n := range tt.notes {
				if n.swapAgo != 0 {
					c.set(now.Add(-n.swapAgo))
					if ok, err := h.Swap(ctx, n.run, "approve", n.state, n.state, "touched"); !ok || err != nil {
						t.Fatalf("Swap(%s) = %v, %v", n.run, ok, err)
					}
				}
			}
			if tt.put >= 0 {
				c.set(now.Add(-tt.put))
				if err := s.Put(ctx, "t", []byte("paused")); err != nil {
					t.Fatal(err)
				}
			}
			if tt.deleted {
				if err := s.Delete(ctx, "t"); err != nil {
					t.Fatal(err)
				}
			}
			// Until the store opens again, nothing is forgotten.
			if all, err := h.Notes(ctx, Asking, Held, Card, Tombstone, Withdrawn); err != nil || len(all) != len(tt.notes) {
				t.Errorf("Notes() while open = %d notes, %v; want all %d", len(all), err, len(tt.notes))
			}
			s.Close()
			c.set(now)
			h = HoldingOf(openStore(t, dir, opts))
			all, err := h.Notes(ctx, Asking, Held, Card, Tombstone, Withdrawn)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, n := range all {
				got = append(got, n.Run)
			}
			want := append([]string{}, tt.want...)
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("notes kept after reopening (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHoldingFromLayout1: a database written before the holding notes opens,
// keeps its runs, and gains the holding table.
func TestHoldingFromLayout1(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := Path(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: paused}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE waiting (
			thread     TEXT PRIMARY KEY,
			checkpoint BLOB NOT NULL,
			updated_at INTEGER NOT NULL -- unix milliseconds
		)`,
		fmt.Sprintf(`INSERT INTO waiting (thread, checkpoint, updated_at) VALUES ('old-thread', X'00FF70', %d)`,
			paused.Add(-time.Hour).UnixMilli()),
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, dir, Config{Now: c.Now})
	if got, ok, err := s.Get(ctx, "old-thread"); err != nil || !ok || string(got) != "\x00\xffp" {
		t.Errorf("Get(old-thread) after opening layout 1 = %q, %v, %v; want its checkpoint", got, ok, err)
	}
	if n := s.Forgotten(); n != 0 {
		t.Errorf("Forgotten() = %d, want 0", n)
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != schemaVersion || schemaVersion != 3 {
		t.Errorf("user_version after opening layout 1 = %d, want 3 (schemaVersion %d)", version, schemaVersion)
	}
	h := HoldingOf(s)
	n := fullNote()
	n.Thread = "old-thread"
	hold(t, h, n)
	if _, ok, err := h.Note(ctx, "old-thread"); !ok || err != nil {
		t.Errorf("Note(old-thread) = ok %v, %v; want the note just held", ok, err)
	}
	s.Close()

	// And it opens again as layout 3, note and checkpoint kept.
	s = openStore(t, dir, Config{Now: c.Now})
	if _, ok, err := HoldingOf(s).Find(ctx, n.Run, n.Node); !ok || err != nil {
		t.Errorf("Find() after reopening = ok %v, %v; want the note", ok, err)
	}
	if _, ok, err := s.Get(ctx, "old-thread"); !ok || err != nil {
		t.Errorf("Get(old-thread) after reopening = ok %v, %v; want it", ok, err)
	}
}
