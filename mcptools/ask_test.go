package mcptools

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAskForTools(t *testing.T) {
	t.Parallel()
	s, log := openOrders(t)
	got, err := s.AskForTools(t.Context(), "orders", 0)
	if err != nil {
		t.Fatalf("AskForTools(orders): %v", err)
	}
	if diff := cmp.Diff([]string{"lookup_order", "refund"}, got); diff != "" {
		t.Errorf("AskForTools(orders) mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.AskForTools(t.Context(), "payments", 0); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("AskForTools(payments) = %v, want ErrUnknownServer", err)
	}
	if n := log.starts(); n != 1 {
		t.Errorf("server started %d times, want 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.AskForTools(t.Context(), "orders", 0); !errors.Is(err, ErrClosed) {
		t.Errorf("AskForTools after Close = %v, want ErrClosed", err)
	}
}

// TestAskForToolsWithin: a server that never lists its tools is given up on
// at the time limit, whatever the Set's call timeout, and stays usable for
// its calls.
func TestAskForToolsWithin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcp-silent")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/mcp-silent").CombinedOutput(); err != nil {
		t.Fatalf("building mcp-silent: %v\n%s", err, out)
	}
	s, err := Open(t.Context(), dir, map[string]Server{
		"silent": {Command: bin, Tools: []Tool{{Name: "ping"}}},
	}, Config{CallTimeout: time.Hour})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	const within = 500 * time.Millisecond
	for i := range 2 {
		began := time.Now()
		_, err := s.AskForTools(t.Context(), "silent", within)
		took := time.Since(began)
		if !errors.Is(err, ErrNoAnswer) {
			t.Errorf("ask %d: AskForTools(silent) = %v, want ErrNoAnswer", i, err)
		}
		if took > within+5*time.Second {
			t.Errorf("ask %d: AskForTools(silent) took %v, limit %v", i, took, within)
		}
	}
	if _, err := s.Mismatch(t.Context(), "silent", within); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("Mismatch(silent) = %v, want ErrNoAnswer", err)
	}
	got, err := s.Call(t.Context(), "silent.ping", nil)
	if err != nil {
		t.Fatalf("Call(silent.ping) after the asks: %v", err)
	}
	if diff := cmp.Diff(map[string]any{"pong": true}, got); diff != "" {
		t.Errorf("Call(silent.ping) mismatch (-want +got):\n%s", diff)
	}
}

// TestAskForToolsNeverStarts: a process that never answers the handshake is
// given up on at the time limit too.
func TestAskForToolsNeverStarts(t *testing.T) {
	t.Parallel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("no sleep command (coreutils): %v", err)
	}
	s, err := Open(t.Context(), t.TempDir(), map[string]Server{
		"mute": {Command: sleep, Args: []string{"30"}, Tools: []Tool{{Name: "x"}}},
	}, Config{CallTimeout: time.Hour})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	const within = 300 * time.Millisecond
	began := time.Now()
	_, err = s.AskForTools(t.Context(), "mute", within)
	if !errors.Is(err, ErrNoAnswer) {
		t.Errorf("AskForTools(mute) = %v, want ErrNoAnswer", err)
	}
	if took := time.Since(began); took > within+5*time.Second {
		t.Errorf("AskForTools(mute) took %v, limit %v", took, within)
	}
}

func TestMismatch(t *testing.T) {
	t.Parallel()
	dir, servers := ordersFlow(t)
	orders := servers["orders"]
	orders.Tools = []Tool{{Name: "lookup_order"}, {Name: "cancel_order"}}
	servers["orders"] = orders
	s, err := Open(t.Context(), dir, servers, Config{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	got, err := s.Mismatch(t.Context(), "orders", 0)
	if err != nil {
		t.Fatalf("Mismatch(orders): %v", err)
	}
	want := Mismatch{Server: "orders", DeclaredNotServed: []string{"cancel_order"}, ServedNotDeclared: []string{"refund"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Mismatch(orders) mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.Mismatch(t.Context(), "payments", 0); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Mismatch(payments) = %v, want ErrUnknownServer", err)
	}
	if diff := cmp.Diff([]string{"orders"}, s.Servers()); diff != "" {
		t.Errorf("Servers() mismatch (-want +got):\n%s", diff)
	}
}

func TestMismatchNone(t *testing.T) {
	t.Parallel()
	s, _ := openOrders(t)
	got, err := s.Mismatch(t.Context(), "orders", 0)
	if err != nil {
		t.Fatalf("Mismatch(orders): %v", err)
	}
	if !got.None() {
		t.Errorf("Mismatch(orders) = %+v, want none", got)
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		declared []string
		served   []string
		want     Mismatch
		str      string
	}{
		{"same", []string{"b", "a"}, []string{"a", "b"},
			Mismatch{Server: "s"}, `mcp server "s" serves what the flow declares`},
		{"nothing either side", nil, nil,
			Mismatch{Server: "s"}, `mcp server "s" serves what the flow declares`},
		{"declared, not served", []string{"a", "c", "b"}, []string{"a"},
			Mismatch{Server: "s", DeclaredNotServed: []string{"b", "c"}}, `mcp server "s": declared but not served: b, c`},
		{"served, not declared", []string{"a"}, []string{"z", "a", "y"},
			Mismatch{Server: "s", ServedNotDeclared: []string{"y", "z"}}, `mcp server "s": served but not declared: y, z`},
		{"both, repeats once", []string{"a", "a", "b"}, []string{"b", "c", "c"},
			Mismatch{Server: "s", DeclaredNotServed: []string{"a"}, ServedNotDeclared: []string{"c"}},
			`mcp server "s": declared but not served: a; served but not declared: c`},
		{"a server that serves nothing", []string{"a"}, nil,
			Mismatch{Server: "s", DeclaredNotServed: []string{"a"}}, `mcp server "s": declared but not served: a`},
	}
	for _, tt := range tests {
		got := Compare("s", tt.declared, tt.served)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Compare(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
		if got.None() != (len(tt.want.DeclaredNotServed)+len(tt.want.ServedNotDeclared) == 0) {
			t.Errorf("Compare(%s).None() = %v", tt.name, got.None())
		}
		if s := got.String(); s != tt.str {
			t.Errorf("Compare(%s).String() = %q, want %q", tt.name, s, tt.str)
		}
	}
}
