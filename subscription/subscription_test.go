package subscription

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// declared is the refund desk's declaration, with a tool whose name holds a
// dot.
var declared = map[string][]string{
	"orders": {"lookup_order", "refund"},
	"crm":    {"find.customer"},
}

func newSub(t *testing.T, board bool, memory string) *Subscription {
	t.Helper()
	s, err := New(Config{Declared: declared, Board: board, Memory: memory})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func set(t *testing.T, s *Subscription, on ...string) {
	t.Helper()
	if _, err := s.Set(on); err != nil {
		t.Fatalf("Set(%q): %v", on, err)
	}
}

// TestThreeWay is the rule, every answer with its source named.
func TestThreeWay(t *testing.T) {
	t.Parallel()
	noBoard := func(t *testing.T) *Subscription { return newSub(t, false, "") }
	neverSpoke := func(t *testing.T) *Subscription { return newSub(t, true, filepath.Join(t.TempDir(), "m.json")) }
	spoke := func(on ...string) func(t *testing.T) *Subscription {
		return func(t *testing.T) *Subscription {
			s := newSub(t, true, filepath.Join(t.TempDir(), "m.json"))
			set(t, s, on...)
			return s
		}
	}
	unreachable := func(on ...string) func(t *testing.T) *Subscription {
		return func(t *testing.T) *Subscription {
			s := spoke(on...)(t)
			s.Unreachable()
			return s
		}
	}
	restarted := func(on ...string) func(t *testing.T) *Subscription {
		return func(t *testing.T) *Subscription {
			mem := filepath.Join(t.TempDir(), "m.json")
			set(t, newSub(t, true, mem), on...)
			s := newSub(t, true, mem)
			if err := s.Recall(); err != nil {
				t.Fatalf("Recall: %v", err)
			}
			return s
		}
	}
	tests := []struct {
		name    string
		sub     func(t *testing.T) *Subscription
		tool    string
		want    Answer
		instead []string // what the refusal offers instead
	}{
		{"no board: declared", noBoard, "orders.refund",
			Answer{Allowed: true, Source: NoBoard}, nil},
		{"no board: declared, dotted tool", noBoard, "crm.find.customer",
			Answer{Allowed: true, Source: NoBoard}, nil},
		{"no board: undeclared", noBoard, "orders.delete",
			Answer{Source: NoBoard, Reason: Undeclared}, declaredNames()},
		{"no board: no server in the name", noBoard, "refund",
			Answer{Source: NoBoard, Reason: Undeclared}, declaredNames()},
		{"board spoke: switched on", spoke("orders.lookup_order"), "orders.lookup_order",
			Answer{Allowed: true, Source: FromBoard}, nil},
		{"board spoke: switched off", spoke("orders.lookup_order"), "orders.refund",
			Answer{Source: FromBoard, Reason: NotSwitchedOn}, []string{"orders.lookup_order"}},
		{"board spoke: everything off", spoke(), "orders.lookup_order",
			Answer{Source: FromBoard, Reason: NotSwitchedOn}, nil},
		{"board spoke: undeclared, though the board named it", spoke("orders.lookup_order", "orders.delete"), "orders.delete",
			Answer{Source: FromBoard, Reason: Undeclared}, []string{"orders.lookup_order"}},
		{"board never spoke: declared", neverSpoke, "orders.lookup_order",
			Answer{Source: NobodyDecided, Reason: NotSwitchedOn}, nil},
		{"board never spoke: undeclared", neverSpoke, "orders.delete",
			Answer{Source: NobodyDecided, Reason: Undeclared}, nil},
		{"board unreachable: switched on", unreachable("orders.refund"), "orders.refund",
			Answer{Allowed: true, Source: FromMemory}, nil},
		{"board unreachable: switched off", unreachable("orders.refund"), "crm.find.customer",
			Answer{Source: FromMemory, Reason: NotSwitchedOn}, []string{"orders.refund"}},
		{"restarted, board unreachable: switched on", restarted("crm.find.customer"), "crm.find.customer",
			Answer{Allowed: true, Source: FromMemory}, nil},
		{"restarted, board unreachable: switched off", restarted("crm.find.customer"), "orders.refund",
			Answer{Source: FromMemory, Reason: NotSwitchedOn}, []string{"crm.find.customer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.sub(t).MayCallTool(tt.tool)
			tt.want.Tool = tt.tool
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Answer{}, "Refusal")); diff != "" {
				t.Errorf("MayCallTool(%s) mismatch (-want +got):\n%s", tt.tool, diff)
			}
			checkRefusal(t, got, tt.instead)
		})
	}
}

// checkRefusal checks that a refusal names the tool and offers exactly the
// tools switched on, and that an allowed call has none.
func checkRefusal(t *testing.T, a Answer, instead []string) {
	t.Helper()
	if a.Allowed {
		if a.Refusal != "" || a.Err() != nil {
			t.Errorf("MayCallTool(%s) allowed with refusal %q, error %v", a.Tool, a.Refusal, a.Err())
		}
		return
	}
	if !strings.Contains(a.Refusal, fmt.Sprintf("%q", a.Tool)) {
		t.Errorf("MayCallTool(%s).Refusal = %q, want it to name the tool", a.Tool, a.Refusal)
	}
	for _, name := range declaredNames() {
		if got, want := strings.Contains(a.Refusal, name+",") || strings.Contains(a.Refusal, name+"."), contains(instead, name); got != want && name != a.Tool {
			t.Errorf("MayCallTool(%s).Refusal offers %s: %v, want %v\nrefusal: %s", a.Tool, name, got, want, a.Refusal)
		}
	}
	if len(instead) == 0 && !strings.Contains(a.Refusal, "No tool is switched on") {
		t.Errorf("MayCallTool(%s).Refusal = %q, want it to say no tool is switched on", a.Tool, a.Refusal)
	}
	err := a.Err()
	var re *RefusedError
	if !errors.Is(err, ErrRefused) || !errors.As(err, &re) || re.Answer != a || err.Error() != a.Refusal {
		t.Errorf("MayCallTool(%s).Err() = %v, want a *RefusedError holding the answer", a.Tool, err)
	}
}

func declaredNames() []string {
	return []string{"crm.find.customer", "orders.lookup_order", "orders.refund"}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestOn(t *testing.T) {
	t.Parallel()
	none := func(t *testing.T) *Subscription { return newSub(t, true, "") }
	tests := []struct {
		name    string
		sub     func(t *testing.T) *Subscription
		want    []string
		src     Source
		nothing bool
	}{
		{"no board", func(t *testing.T) *Subscription { return newSub(t, false, "") }, declaredNames(), NoBoard, false},
		{"no board, nothing declared", func(t *testing.T) *Subscription {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, []string{}, NoBoard, true},
		{"board never spoke", none, []string{}, NobodyDecided, true},
		{"board spoke", func(t *testing.T) *Subscription {
			s := none(t)
			set(t, s, "orders.refund", "orders.refund", "crm.find.customer")
			return s
		}, []string{"crm.find.customer", "orders.refund"}, FromBoard, false},
		{"board switched everything off", func(t *testing.T) *Subscription {
			s := none(t)
			set(t, s)
			return s
		}, []string{}, FromBoard, true},
		{"board unreachable", func(t *testing.T) *Subscription {
			s := none(t)
			set(t, s, "orders.refund")
			s.Unreachable()
			return s
		}, []string{"orders.refund"}, FromMemory, false},
		{"board never spoke, unreachable", func(t *testing.T) *Subscription {
			s := none(t)
			s.Unreachable()
			return s
		}, []string{}, NobodyDecided, true},
		{"board back after unreachable", func(t *testing.T) *Subscription {
			s := none(t)
			set(t, s, "orders.refund")
			s.Unreachable()
			set(t, s, "orders.lookup_order")
			return s
		}, []string{"orders.lookup_order"}, FromBoard, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.sub(t)
			on, src := s.On()
			if diff := cmp.Diff(tt.want, on); diff != "" || src != tt.src {
				t.Errorf("On() = %q, %s, want %q, %s", on, src, tt.want, tt.src)
			}
			if nothing, src := s.NothingSwitchedOn(); nothing != tt.nothing || src != tt.src {
				t.Errorf("NothingSwitchedOn() = %v, %s, want %v, %s", nothing, src, tt.nothing, tt.src)
			}
		})
	}
}

func TestSetUndeclared(t *testing.T) {
	t.Parallel()
	s := newSub(t, true, "")
	undeclared, err := s.Set([]string{"orders.delete", "orders.refund", "payments.charge", "orders.delete", "refund"})
	if err != nil {
		t.Fatalf("Set: %v", err)
	}
	if diff := cmp.Diff([]string{"orders.delete", "payments.charge", "refund"}, undeclared); diff != "" {
		t.Errorf("Set undeclared mismatch (-want +got):\n%s", diff)
	}
	if on, _ := s.On(); !cmp.Equal(on, []string{"orders.refund"}) {
		t.Errorf("On() = %q, want only the declared orders.refund", on)
	}
}

func TestSetWithoutBoard(t *testing.T) {
	t.Parallel()
	s := newSub(t, false, filepath.Join(t.TempDir(), "m.json"))
	if _, err := s.Set([]string{"orders.refund"}); !errors.Is(err, ErrNoBoard) {
		t.Errorf("Set without a board = %v, want ErrNoBoard", err)
	}
	if on, src := s.On(); !cmp.Equal(on, declaredNames()) || src != NoBoard {
		t.Errorf("On() after Set without a board = %q, %s, want the declaration, %s", on, src, NoBoard)
	}
}

func TestNewRefusesABadDeclaration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		declared map[string][]string
	}{
		{"empty server name", map[string][]string{"": {"x"}}},
		{"dotted server name", map[string][]string{"or.ders": {"refund"}}},
		{"empty tool name", map[string][]string{"orders": {"refund", ""}}},
	}
	for _, tt := range tests {
		if s, err := New(Config{Declared: tt.declared, Board: true}); err == nil {
			t.Errorf("New(%s) = %v, nil, want an error", tt.name, s)
		}
	}
}

// TestConcurrent runs the board's words, unreachability and calls at once
// (run with -race), and checks that memory ends up holding the last word.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	mem := filepath.Join(t.TempDir(), "m.json")
	s := newSub(t, true, mem)
	words := [][]string{{"orders.refund"}, {"orders.lookup_order", "crm.find.customer"}, {}, declaredNames()}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				if _, err := s.Set(words[(i+j)%len(words)]); err != nil {
					t.Errorf("Set: %v", err)
				}
				if j%5 == 0 {
					s.Unreachable()
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				for _, name := range declaredNames() {
					a := s.MayCallTool(name)
					if a.Allowed == (a.Refusal != "") {
						t.Errorf("MayCallTool(%s) = %+v: allowed and refusal disagree", name, a)
					}
					if a.Source != FromBoard && a.Source != FromMemory && a.Source != NobodyDecided {
						t.Errorf("MayCallTool(%s).Source = %s", name, a.Source)
					}
				}
				s.On()
				s.NothingSwitchedOn()
			}
		})
	}
	wg.Wait()
	live, _ := s.On()
	again := newSub(t, true, mem)
	if err := again.Recall(); err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if kept, src := again.On(); !cmp.Equal(live, kept) || src != FromMemory {
		t.Errorf("after concurrent words, memory holds %q (%s), want the last word %q", kept, src, live)
	}
	entries, err := os.ReadDir(filepath.Dir(mem))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("memory folder holds %d files, want only the memory (no temporary files left)", len(entries))
	}
}
