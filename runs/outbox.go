package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// The bounds of an outbox: at most MaxOutboxSummaries summaries and
// MaxOutboxBytes bytes of them as JSON. Past either, the oldest the board
// already holds (the records of paused runs) go first, then the oldest it
// does not, counted in Summary.Dropped.
const (
	MaxOutboxSummaries = 256
	MaxOutboxBytes     = 8 << 20
)

// OutboxPath is where the outbox of the agent in dir is kept.
func OutboxPath(dir string) string { return filepath.Join(dir, ".symphonix", "runs-outbox.json") }

// Outbox holds the summaries of runs that paused or ended until the board
// says it stored them, in a file (0600) rewritten whole on every change, so
// they outlive a board that cannot be reached and a restart. It holds one
// summary per run — a newer one replaces the older — and keeps the
// summary of a paused run after the board stored it, as the record the
// run goes on from after a restart. It is bounded (MaxOutboxSummaries,
// MaxOutboxBytes); a summary dropped to make room is counted, and the
// count is given with the next summary handed out (Next) until the board
// stores that one. Safe for concurrent use.
type Outbox struct {
	path string

	mu      sync.Mutex
	entries []*entry // oldest first
	size    int      // bytes of the entries' summaries
	dropped uint32   // dropped since the board last stored one
	// handed is the summaries Next handed out lately, with the dropped
	// count each carried: the board may store one the outbox has dropped
	// since. At most maxHanded.
	handed []handout
}

// handout is a summary Next handed out and the dropped count it carried.
type handout struct {
	run     string
	seq     uint32
	dropped uint32
}

// maxHanded is how many handouts an outbox remembers: the link has one
// summary in flight at a time.
const maxHanded = 16

// entry is one summary in the outbox.
type entry struct {
	Summary Summary `json:"summary"`
	// Stored: the board holds it; kept only as a paused run's record.
	Stored bool `json:"stored,omitempty"`
	size   int
}

// outboxFile is the file's shape.
type outboxFile struct {
	Dropped   uint32   `json:"dropped,omitempty"`
	Summaries []*entry `json:"summaries"`
}

// OpenOutbox reads the outbox at path (OutboxPath), or starts an empty one
// when there is no file. It fails for a file that cannot be read or is not
// an outbox, and leaves it as it is.
func OpenOutbox(path string) (*Outbox, error) {
	o := &Outbox{path: path}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, nil
	case err != nil:
		return nil, fmt.Errorf("runs: the outbox: %w", err)
	}
	var f outboxFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("runs: the outbox %s: %w", path, err)
	}
	o.dropped = f.Dropped
	for _, e := range f.Summaries {
		if e == nil || e.Summary.Run.ID == "" {
			continue
		}
		b, _ := json.Marshal(e.Summary)
		e.size = len(b)
		o.entries = append(o.entries, e)
		o.size += e.size
	}
	return o, nil
}

// Path is the outbox's file.
func (o *Outbox) Path() string { return o.path }

// Add puts s in the outbox, replacing an older summary of the same run (a
// newer one already there wins), and drops the oldest to stay within the
// bounds. It fails only when the file cannot be written; the summary is
// held in memory all the same.
func (o *Outbox) Add(s Summary) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("runs: the summary of run %s: %w", s.Run.ID, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, e := range o.entries {
		if e.Summary.Run.ID != s.Run.ID {
			continue
		}
		if e.Summary.Seq >= s.Seq {
			return nil // the outbox has this one, or a newer
		}
		o.remove(i)
		break
	}
	o.entries = append(o.entries, &entry{Summary: s, size: len(b)})
	o.size += len(b)
	o.bound()
	return o.save()
}

// bound drops entries, oldest first, until the outbox is within its
// bounds: those the board holds first, then the others, counted.
func (o *Outbox) bound() {
	over := func() bool { return len(o.entries) > MaxOutboxSummaries || o.size > MaxOutboxBytes }
	for i := 0; over() && i < len(o.entries); {
		if o.entries[i].Stored {
			o.remove(i)
			continue
		}
		i++
	}
	for over() && len(o.entries) > 0 {
		o.remove(0)
		o.dropped++
	}
}

func (o *Outbox) remove(i int) {
	o.size -= o.entries[i].size
	o.entries = append(o.entries[:i], o.entries[i+1:]...)
}

// Next returns the oldest summary the board has yet to store for which
// skip (nil: none) is false, with Dropped set to how many summaries were
// dropped since the board last stored one; false when there is none.
func (o *Outbox) Next(skip func(run string, seq uint32) bool) (Summary, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.entries {
		if e.Stored || (skip != nil && skip(e.Summary.Run.ID, e.Summary.Seq)) {
			continue
		}
		o.handed = append(o.handed, handout{e.Summary.Run.ID, e.Summary.Seq, o.dropped})
		if len(o.handed) > maxHanded {
			o.handed = o.handed[1:]
		}
		s := e.Summary
		s.Run = s.Run.clone()
		s.Dropped = o.dropped
		return s, true
	}
	return Summary{}, false
}

// Stored takes the board's word that it holds the summary of run with
// seq: the summary leaves the outbox (a paused run's stays, as its
// record), and the drops reported with it are forgotten. A word about a
// summary the outbox no longer holds, or an older one, changes nothing.
func (o *Outbox) Stored(run string, seq uint32) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	changed := false
	for i, h := range o.handed {
		if h.run == run && h.seq == seq {
			o.dropped -= min(h.dropped, o.dropped)
			o.handed = append(o.handed[:i], o.handed[i+1:]...)
			changed = true
			break
		}
	}
	for i, e := range o.entries {
		if e.Summary.Run.ID != run || e.Summary.Seq != seq || e.Stored {
			continue
		}
		if e.Summary.Run.State == StatePaused {
			e.Stored = true
		} else {
			o.remove(i)
		}
		changed = true
		break
	}
	if !changed {
		return nil
	}
	return o.save()
}

// Len is how many summaries the board has yet to store.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, e := range o.entries {
		if !e.Stored {
			n++
		}
	}
	return n
}

// Dropped is how many summaries were dropped since the board last stored
// one.
func (o *Outbox) Dropped() uint32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped
}

// paused returns the newest summaries of the runs that were paused.
func (o *Outbox) paused() []Summary {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Summary
	for _, e := range o.entries {
		if e.Summary.Run.State == StatePaused {
			s := e.Summary
			s.Run = s.Run.clone()
			out = append(out, s)
		}
	}
	return out
}

// save rewrites the file: a new file renamed over the old, so a crash
// leaves one or the other. The caller holds o.mu.
func (o *Outbox) save() (err error) {
	data, err := json.Marshal(outboxFile{Dropped: o.dropped, Summaries: o.entries})
	if err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	dir := filepath.Dir(o.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(o.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	if err := os.Rename(f.Name(), o.path); err != nil {
		return fmt.Errorf("runs: the outbox: %w", err)
	}
	return nil
}
