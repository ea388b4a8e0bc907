package subscription

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBoardStopped: an agent that heard the board keeps its last word from
// memory when the board stops, across a restart; a fresh agent that never
// heard from the board calls nothing.
func TestBoardStopped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mem := MemoryPath(dir)

	heard := newSub(t, true, mem)
	set(t, heard, "orders.lookup_order")
	heard.Unreachable()
	if a := heard.MayCallTool("orders.lookup_order"); !a.Allowed || a.Source != FromMemory {
		t.Errorf("board stopped: MayCallTool(orders.lookup_order) = %+v, want allowed from memory", a)
	}
	if a := heard.MayCallTool("orders.refund"); a.Allowed || a.Source != FromMemory {
		t.Errorf("board stopped: MayCallTool(orders.refund) = %+v, want refused from memory", a)
	}

	restarted := newSub(t, true, mem)
	if a := restarted.MayCallTool("orders.lookup_order"); a.Allowed || a.Source != NobodyDecided {
		t.Errorf("restarted, before Recall: MayCallTool(orders.lookup_order) = %+v, want refused, nobody decided", a)
	}
	if err := restarted.Recall(); err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if a := restarted.MayCallTool("orders.lookup_order"); !a.Allowed || a.Source != FromMemory {
		t.Errorf("restarted: MayCallTool(orders.lookup_order) = %+v, want allowed from memory", a)
	}
	if a := restarted.MayCallTool("orders.refund"); a.Allowed || a.Source != FromMemory || a.Reason != NotSwitchedOn {
		t.Errorf("restarted: MayCallTool(orders.refund) = %+v, want refused from memory", a)
	}

	fresh := newSub(t, true, MemoryPath(t.TempDir()))
	if err := fresh.Recall(); err != nil {
		t.Fatalf("Recall with no memory: %v", err)
	}
	for _, name := range declaredNames() {
		if a := fresh.MayCallTool(name); a.Allowed || a.Source != NobodyDecided {
			t.Errorf("fresh agent: MayCallTool(%s) = %+v, want refused, nobody decided", name, a)
		}
	}
	if nothing, src := fresh.NothingSwitchedOn(); !nothing || src != NobodyDecided {
		t.Errorf("fresh agent: NothingSwitchedOn() = %v, %s, want true, %s", nothing, src, NobodyDecided)
	}

	// The board speaks again: its word, not memory's.
	set(t, restarted, "orders.refund")
	if a := restarted.MayCallTool("orders.refund"); !a.Allowed || a.Source != FromBoard {
		t.Errorf("board back: MayCallTool(orders.refund) = %+v, want allowed from the board", a)
	}
}

func TestMemoryFile(t *testing.T) {
	t.Parallel()
	mem := MemoryPath(t.TempDir())
	set(t, newSub(t, true, mem), "orders.refund", "crm.find.customer")
	data, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), `{"on":["crm.find.customer","orders.refund"]}`+"\n"; got != want {
		t.Errorf("memory file = %q, want %q", got, want)
	}
	fi, err := os.Stat(mem)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("memory file mode = %v, want 0600", perm)
	}
}

// TestMemoryWithinDeclaration: a word remembered for a larger declaration
// switches on only what is declared today.
func TestMemoryWithinDeclaration(t *testing.T) {
	t.Parallel()
	mem := filepath.Join(t.TempDir(), "m.json")
	set(t, newSub(t, true, mem), "orders.refund", "crm.find.customer")
	s, err := New(Config{Declared: map[string][]string{"orders": {"refund", "lookup_order"}}, Board: true, Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Recall(); err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if on, src := s.On(); !cmp.Equal(on, []string{"orders.refund"}) || src != FromMemory {
		t.Errorf("On() = %q, %s, want [orders.refund], %s", on, src, FromMemory)
	}
}

// TestMemoryEverythingOff: a remembered word that switched everything off is
// a word, not silence.
func TestMemoryEverythingOff(t *testing.T) {
	t.Parallel()
	mem := filepath.Join(t.TempDir(), "m.json")
	set(t, newSub(t, true, mem))
	s := newSub(t, true, mem)
	if err := s.Recall(); err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if nothing, src := s.NothingSwitchedOn(); !nothing || src != FromMemory {
		t.Errorf("NothingSwitchedOn() = %v, %s, want true, %s", nothing, src, FromMemory)
	}
}

// TestMemoryUnreadable: a memory that cannot be used is a board that never
// spoke, said in an error, and never everything.
func TestMemoryUnreadable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
	}{
		{"not json", writeFile("everything")},
		{"truncated", writeFile(`{"on":["orders.refund"`)},
		{"empty file", writeFile("")},
		{"no on", writeFile(`{}`)},
		{"on is null", writeFile(`{"on":null}`)},
		{"on is not a list", writeFile(`{"on":"*"}`)},
		{"an empty name", writeFile(`{"on":["orders.refund",""]}`)},
		{"trailing garbage", writeFile(`{"on":["orders.refund"]} {"on":[]}`)},
		{"a folder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mem := filepath.Join(t.TempDir(), "m.json")
			tt.write(t, mem)
			s := newSub(t, true, mem)
			if err := s.Recall(); !errors.Is(err, ErrMemoryUnreadable) {
				t.Errorf("Recall = %v, want ErrMemoryUnreadable", err)
			}
			if on, src := s.On(); len(on) != 0 || src != NobodyDecided {
				t.Errorf("On() = %q, %s, want nothing, %s", on, src, NobodyDecided)
			}
			// The board's next word is kept over the bad memory.
			if tt.name == "a folder" {
				return
			}
			set(t, s, "orders.refund")
			again := newSub(t, true, mem)
			if err := again.Recall(); err != nil {
				t.Fatalf("Recall after the board spoke: %v", err)
			}
			if on, src := again.On(); !cmp.Equal(on, []string{"orders.refund"}) || src != FromMemory {
				t.Errorf("On() after the board spoke = %q, %s, want [orders.refund], %s", on, src, FromMemory)
			}
		})
	}
}

func writeFile(content string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMemoryNotKept: a word that cannot be kept still applies, and the
// caller is told.
func TestMemoryNotKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	writeFile("x")(t, blocker)
	s := newSub(t, true, filepath.Join(blocker, "m.json"))
	if _, err := s.Set([]string{"orders.refund"}); err == nil {
		t.Errorf("Set with memory under a file = nil error, want one")
	}
	if a := s.MayCallTool("orders.refund"); !a.Allowed || a.Source != FromBoard {
		t.Errorf("MayCallTool(orders.refund) = %+v, want allowed from the board", a)
	}
}

// TestRecallAfterBoardSpoke: memory never overrides the board's live word.
func TestRecallAfterBoardSpoke(t *testing.T) {
	t.Parallel()
	mem := filepath.Join(t.TempDir(), "m.json")
	s := newSub(t, true, mem)
	set(t, s, "orders.lookup_order")
	writeFile(`{"on":["orders.refund"]}`)(t, mem)
	if err := s.Recall(); err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if on, src := s.On(); !cmp.Equal(on, []string{"orders.lookup_order"}) || src != FromBoard {
		t.Errorf("On() = %q, %s, want the board's [orders.lookup_order], %s", on, src, FromBoard)
	}
}

// TestNeverSpoke: a board that says it never decided takes everything off
// and forgets the remembered word, so a restart does not bring it back.
func TestNeverSpoke(t *testing.T) {
	t.Parallel()
	mem := MemoryPath(t.TempDir())
	s := newSub(t, true, mem)
	set(t, s, "orders.lookup_order")
	if err := s.NeverSpoke(); err != nil {
		t.Fatal(err)
	}
	if a := s.MayCallTool("orders.lookup_order"); a.Allowed || a.Source != NobodyDecided {
		t.Errorf("after NeverSpoke: %+v, want refused, nobody decided", a)
	}
	if _, err := os.Stat(mem); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("memory file after NeverSpoke: %v, want gone", err)
	}
	restarted := newSub(t, true, mem)
	if err := restarted.Recall(); err != nil {
		t.Fatal(err)
	}
	if on, src := restarted.On(); len(on) != 0 || src != NobodyDecided {
		t.Errorf("restarted: on %v from %s, want nothing, nobody decided", on, src)
	}
	if err := newSub(t, false, "").NeverSpoke(); !errors.Is(err, ErrNoBoard) {
		t.Errorf("NeverSpoke without a board = %v, want ErrNoBoard", err)
	}
}
