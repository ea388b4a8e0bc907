package runs_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/runs"
)

func summary(id string, seq uint32, state string) runs.Summary {
	return runs.Summary{Run: runs.Run{ID: id, State: state}, Seq: seq}
}

// TestOutboxOrderReplaceStore: summaries come out oldest first; a newer
// one of the same run replaces the older (an older one never replaces a
// newer); stored ones leave, a paused run's kept as its record; all of it
// survives reopening the file.
func TestOutboxOrderReplaceStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "outbox.json")
	box, err := runs.OpenOutbox(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []runs.Summary{
		summary("a", 3, runs.StatePaused), summary("b", 2, runs.StateFinished),
		summary("a", 6, runs.StateFinished), summary("b", 1, runs.StatePaused),
		summary("c", 4, runs.StatePaused),
	} {
		if err := box.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	skip := map[string]bool{}
	for s, ok := box.Next(nil); ok && len(got) < 10; s, ok = box.Next(func(run string, _ uint32) bool { return skip[run] }) {
		got = append(got, fmt.Sprintf("%s/%d", s.Run.ID, s.Seq))
		skip[s.Run.ID] = true
	}
	if want := "b/2 a/6 c/4"; strings.Join(got, " ") != want {
		t.Errorf("Next in turn: %q; want %q", got, want)
	}
	if err := box.Stored("b", 1); err != nil { // an older seq: nothing
		t.Fatal(err)
	}
	box.Stored("b", 2)
	box.Stored("c", 4)
	if box.Len() != 1 {
		t.Errorf("Len after two stored = %d, want 1", box.Len())
	}
	again, err := runs.OpenOutbox(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := again.Next(nil); !ok || s.Run.ID != "a" || s.Seq != 6 || again.Len() != 1 {
		t.Errorf("reopened: Next = %+v, %v, Len %d; want a/6 alone", s, ok, again.Len())
	}
	rec, err := runs.NewRecorder(runs.Config{Outbox: again})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.Get("c"); !ok {
		t.Error("the stored summary of paused run c is not kept as its record")
	}
}

// TestOutboxBounded: past MaxOutboxSummaries the oldest go, the records
// of paused runs the board holds first; the drops are counted in the next
// summary handed out, and forgotten once the board stores that one.
func TestOutboxBounded(t *testing.T) {
	t.Parallel()
	box, err := runs.OpenOutbox(filepath.Join(t.TempDir(), "outbox.json"))
	if err != nil {
		t.Fatal(err)
	}
	box.Add(summary("held", 1, runs.StatePaused))
	s, _ := box.Next(nil)
	box.Stored(s.Run.ID, s.Seq)
	for i := range runs.MaxOutboxSummaries + 3 { // with the record: 260, so 4 go
		if err := box.Add(summary(fmt.Sprintf("r%03d", i), 1, runs.StateFinished)); err != nil {
			t.Fatal(err)
		}
	}
	if box.Len() != runs.MaxOutboxSummaries || box.Dropped() != 3 {
		t.Fatalf("Len %d Dropped %d; want %d and 3 (the stored record went first)", box.Len(), box.Dropped(), runs.MaxOutboxSummaries)
	}
	first, _ := box.Next(nil)
	if first.Run.ID != "r003" || first.Dropped != 3 {
		t.Errorf("Next = %s dropped %d; want r003 with 3 dropped", first.Run.ID, first.Dropped)
	}
	box.Add(summary("late", 1, runs.StateFinished)) // drops r003, in flight: one more
	if err := box.Stored("r003", 1); err != nil {
		t.Fatal(err)
	}
	if box.Dropped() != 1 {
		t.Errorf("Dropped after the board stored nothing it was told = %d, want 1", box.Dropped())
	}
	box.Next(nil)
	next, _ := box.Next(nil)
	box.Stored(next.Run.ID, next.Seq)
	if next.Dropped != 1 || box.Dropped() != 0 {
		t.Errorf("the next summary said %d dropped, and %d are left to say; want 1 and 0", next.Dropped, box.Dropped())
	}

	big, err := runs.OpenOutbox(filepath.Join(t.TempDir(), "outbox.json"))
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("x", runs.MaxOutboxBytes/4)
	for i := range 5 {
		s := summary(fmt.Sprintf("big%d", i), 1, runs.StateFailed)
		s.Run.Error = huge
		big.Add(s)
	}
	if big.Len() != 3 || big.Dropped() != 2 {
		t.Errorf("by bytes: Len %d Dropped %d; want 3 and 2", big.Len(), big.Dropped())
	}
}

func TestOpenOutboxRefusesGarbage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "outbox.json")
	box, _ := runs.OpenOutbox(path)
	box.Add(summary("a", 1, runs.StateFinished))
	if err := writeFile(path, "not json"); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.OpenOutbox(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenOutbox of garbage = %v; want an error naming the file", err)
	}
}
