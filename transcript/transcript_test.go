package transcript_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/secrets"
	"github.com/symphonix/symphonix/transcript"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func open(t *testing.T, cfg transcript.Config) *transcript.Transcript {
	t.Helper()
	if cfg.Secrets == nil {
		cfg.Secrets = secrets.NewSet(nil)
	}
	tr, err := transcript.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// lines reads the file's turns as they are written.
func lines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// TestTurns: one JSON line per turn, {at, thread, who, asked, answered};
// Thread reads the last n of one thread, oldest first; Conversations the
// pointers, most recent first, without a word of what was said; all of it
// read back by a transcript opened again.
func TestTurns(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), ".symphonix", "transcript.jsonl")
	tr := open(t, transcript.Config{Path: path, Now: c.Now})
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("opening made the file (%v): a transcript nobody wrote to leaves nothing", err)
	}
	at := c.now.Add(123456789 * time.Nanosecond)
	for i := range 5 {
		thread := "ada"
		if i%2 == 1 {
			thread = "bob"
		}
		tr.Write(t.Context(), transcript.Turn{At: at.Add(time.Duration(i) * time.Second), Thread: thread, Who: "ada@example.com",
			Asked: fmt.Sprintf("q%d", i), Answered: map[string]any{"n": float64(i)}})
	}
	got := lines(t, path)
	if len(got) != 5 {
		t.Fatalf("%d lines, want 5", len(got))
	}
	want := map[string]any{"at": "2026-12-02T09:00:00.123456789Z", "thread": "ada", "who": "ada@example.com", "asked": "q0", "answered": map[string]any{"n": 0.0}}
	if fmt.Sprint(got[0]) != fmt.Sprint(want) {
		t.Errorf("first line = %v, want %v", got[0], want)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v (%v), want 0600", st.Mode(), err)
	}

	check := func(tr *transcript.Transcript) {
		t.Helper()
		ada, err := tr.Thread("ada", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(ada) != 2 || ada[0].Asked != "q2" || ada[1].Asked != "q4" || !ada[1].At.Equal(at.Add(4*time.Second)) {
			t.Errorf("Thread(ada, 2) = %+v, want q2 then q4", ada)
		}
		convs := tr.Conversations()
		if len(convs) != 2 || convs[0].Thread != "ada" || convs[0].Turns != 3 || convs[1].Thread != "bob" || convs[1].Turns != 2 ||
			!convs[1].Last.Equal(at.Add(3*time.Second)) {
			t.Errorf("Conversations() = %+v, want ada (3 turns) then bob (2)", convs)
		}
		if none, err := tr.Thread("nobody", 20); err != nil || len(none) != 0 {
			t.Errorf("Thread(nobody) = %v, %v; want none", none, err)
		}
	}
	check(tr)
	check(open(t, transcript.Config{Path: path, Now: c.Now}))

	for _, n := range []int{0, -1, transcript.MaxReadTurns + 1} {
		if _, err := tr.Thread("ada", n); err == nil {
			t.Errorf("Thread(ada, %d) = no error, want one", n)
		}
	}
}

// TestSecretsAndCuts: a turn is written without the named secrets, then
// each side cut to its opening; a turn without a thread is not written.
func TestSecretsAndCuts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	const key = "sk-test-0123456789abcdef"
	var log bytes.Buffer
	tr := open(t, transcript.Config{Path: path, Secrets: secrets.NewSet([]string{key}),
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	long := strings.Repeat("é", transcript.MaxTextChars+5)
	tr.Write(t.Context(), transcript.Turn{Thread: "t", Asked: "my key is " + key, Answered: map[string]any{"text": long}})
	tr.Write(t.Context(), transcript.Turn{Thread: "t", Asked: strings.Repeat("x", transcript.MaxTextChars-3) + key, Answered: "ok"})
	tr.Write(t.Context(), transcript.Turn{Asked: "no thread"})
	got, err := tr.Thread("t", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d turns, want 2 (none without a thread)", len(got))
	}
	if got[0].Asked != "my key is "+secrets.Redacted {
		t.Errorf("asked = %q, want the key taken out", got[0].Asked)
	}
	a, _ := got[0].Answered.(string)
	if n := len([]rune(a)); n != transcript.MaxTextChars+1 || !strings.HasSuffix(a, "…") || !strings.HasPrefix(a, `{"text":"éé`) {
		t.Errorf("a long answer that is not text kept as %d characters %.40q…; want the opening of its JSON and …", n, a)
	}
	// The secret goes before the cut, so no half of it is left.
	if s, _ := got[1].Asked.(string); strings.Contains(s, "sk-test") || !strings.HasSuffix(s, "…") {
		t.Errorf("asked with the key at the cut ends %q; want it cut, and no part of the key", s[len(s)-40:])
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte(key)) || bytes.Contains(raw, []byte("sk-test")) {
		t.Error("the file holds the secret")
	}
	if !strings.Contains(log.String(), "transcript turn not written") {
		t.Errorf("the turn with no thread was not said: %q", log.String())
	}
}

// TestDays: turns older than the days kept are dropped when the
// transcript opens, and once a day after, by writing the file anew.
func TestDays(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	tr := open(t, transcript.Config{Path: path, Days: 1, Now: c.Now})
	tr.Write(t.Context(), transcript.Turn{At: c.now, Thread: "old", Asked: "a", Answered: "b"})
	c.add(20 * time.Hour)
	tr.Write(t.Context(), transcript.Turn{At: c.now, Thread: "newer", Asked: "a", Answered: "b"})
	if n := len(lines(t, path)); n != 2 {
		t.Fatalf("%d lines, want 2", n)
	}
	// Opened 25 hours after the first turn: it is gone.
	c.add(5 * time.Hour)
	tr = open(t, transcript.Config{Path: path, Days: 1, Now: c.Now})
	if got := lines(t, path); len(got) != 1 || got[0]["thread"] != "newer" {
		t.Errorf("after opening, lines = %v, want the newer turn only", got)
	}
	if convs := tr.Conversations(); len(convs) != 1 || convs[0].Thread != "newer" {
		t.Errorf("Conversations() = %+v, want newer only", convs)
	}
	// Running on: within a day of opening nothing is dropped, though
	// "newer" is a day old by then; a day after, a write drops it.
	c.add(20 * time.Hour)
	tr.Write(t.Context(), transcript.Turn{At: c.now, Thread: "now", Asked: "a", Answered: "b"})
	if got := lines(t, path); len(got) != 2 {
		t.Errorf("within a day of the last pruning, lines = %d, want 2", len(got))
	}
	c.add(5 * time.Hour)
	tr.Write(t.Context(), transcript.Turn{At: c.now, Thread: "later", Asked: "a", Answered: "b"})
	got := lines(t, path)
	if len(got) != 2 || got[0]["thread"] != "now" || got[1]["thread"] != "later" {
		t.Errorf("a day after the last pruning, lines = %v, want now and later", got)
	}
	if tr.Has("newer") || !tr.Has("later") {
		t.Error("Has: the dropped thread is still held, or the new one is not")
	}
}

// TestCap: a write that would take the file past its cap drops the oldest
// turns first, to three quarters of it.
func TestCap(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	const max = 2000
	tr := open(t, transcript.Config{Path: path, MaxBytes: max})
	start := time.Now().UTC()
	for i := range 100 {
		tr.Write(t.Context(), transcript.Turn{At: start.Add(time.Duration(i) * time.Second), Thread: "t", Asked: fmt.Sprintf("q%03d", i), Answered: "an answer"})
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > max {
		t.Errorf("file is %d bytes, past its cap of %d", st.Size(), max)
	}
	got, err := tr.Thread("t", transcript.MaxReadTurns)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[len(got)-1].Asked != "q099" {
		t.Fatalf("turns after the cap = %v, want the newest kept", got)
	}
	for i := 1; i < len(got); i++ {
		if !got[i].At.After(got[i-1].At) {
			t.Errorf("turns out of order or repeated at %d", i)
		}
	}
	if c := tr.Conversations(); c[0].Turns != len(got) {
		t.Errorf("Conversations() counts %d turns, the file holds %d", c[0].Turns, len(got))
	}
}

// TestConfig: the secrets must be said; TRANSCRIPT_DAYS is a whole
// number of days, and a bad one is an error naming it.
func TestConfig(t *testing.T) {
	t.Parallel()
	if _, err := transcript.Open(transcript.Config{Path: filepath.Join(t.TempDir(), "x")}); err == nil || !strings.Contains(err.Error(), "Secrets") {
		t.Errorf("Open without Secrets = %v, want it refused", err)
	}
	for v, want := range map[string]int{"": 30, "7": 7, " 90 ": 90, "3650": 3650} {
		if got, err := transcript.DaysFrom(func(string) string { return v }); err != nil || got != want {
			t.Errorf("DaysFrom(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"0", "-1", "thirty", "1.5", "3651"} {
		if _, err := transcript.DaysFrom(func(string) string { return v }); err == nil || !strings.HasPrefix(err.Error(), "TRANSCRIPT_DAYS: ") {
			t.Errorf("DaysFrom(%q) = %v, want an error naming TRANSCRIPT_DAYS", v, err)
		}
	}
}
