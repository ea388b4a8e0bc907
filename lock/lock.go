// Package lock keeps a folder to one served agent at a time (takeLock,
// heldBy, readLock and alive in the API reference):
// <dir>/.symphonix/agent.lock names the process that serves the folder,
// where, and since when. Two agents on one folder would run two sets of MCP
// servers against one waiting store and write one journal from two
// processes.
//
// A lock whose process is gone is taken over; one written on another host
// cannot be checked and counts as held. The design is docs/serve.md,
// "The lock".
package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Path is where the lock of the agent in dir is kept.
func Path(dir string) string { return filepath.Join(dir, ".symphonix", "agent.lock") }

// Holder is what a lock file says about the process that holds it.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	URL     string    `json:"url"`
}

// Me returns a Holder for this process, serving at url since now.
func Me(url string, now time.Time) Holder {
	host, _ := os.Hostname()
	return Holder{PID: os.Getpid(), Host: host, Started: now.UTC(), URL: url}
}

// HeldError is a lock that another live process holds.
type HeldError struct {
	Path   string
	Holder Holder
}

func (e *HeldError) Error() string {
	h := e.Holder
	msg := fmt.Sprintf("lock: the folder is served already: %s is held by pid %d", e.Path, h.PID)
	if h.Host != "" {
		msg += " on " + h.Host
	}
	if h.URL != "" {
		msg += " at " + h.URL
	}
	if !h.Started.IsZero() {
		msg += " since " + h.Started.Format(time.RFC3339)
	}
	return msg
}

// ErrNotFound is Read on a folder with no lock file.
var ErrNotFound = errors.New("lock: no lock file")

// Lock is a folder's lock, held by this process until Release.
type Lock struct {
	path   string
	holder Holder
}

// Holder is what the lock file says.
func (l *Lock) Holder() Holder { return l.holder }

// Take takes the lock of the agent in dir for h (the API reference's
// takeLock): one served agent per folder. It fails with a *HeldError naming
// the holder when a live process holds it (see Alive) — this process
// included, so a folder cannot be served twice from one process either. A
// lock whose process is gone is taken over. A lock file that cannot be read
// as one is stale too: whoever wrote it half is gone, since the file is
// written whole before it gets its name.
func Take(dir string, h Holder) (*Lock, error) {
	path := Path(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	data, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	data = append(data, '\n')
	for range 3 {
		err := create(path, data)
		if err == nil {
			return &Lock{path: path, holder: h}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock: %w", err)
		}
		old, raw, err := readFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // released between the two: try again
		case err != nil && raw == nil:
			return nil, fmt.Errorf("lock: %w", err)
		case err == nil && Alive(old):
			return nil, &HeldError{Path: path, Holder: old}
		}
		if err := setAside(path, raw); err != nil {
			return nil, fmt.Errorf("lock: taking over %s: %w", path, err)
		}
	}
	return nil, fmt.Errorf("lock: %s changed hands while it was being taken; try again", path)
}

// create writes data to path only when nothing is there, and whole: a
// reader sees no file or all of it, never a half-written one.
func create(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".agent.lock-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err != nil {
		return err
	}
	return os.Link(tmp.Name(), path) // fails when path exists
}

// setAside removes the stale lock at path whose bytes are stale. It moves
// the file aside first and looks at what it moved: when another process
// took the lock over in between, the file moved is that one's, and it is
// put back.
func setAside(path string, stale []byte) error {
	aside := path + ".stale-" + strconv.Itoa(os.Getpid())
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer os.Remove(aside)
	moved, err := os.ReadFile(aside)
	if err != nil {
		return err
	}
	if !bytes.Equal(moved, stale) {
		// Somebody else's fresh lock: its name back, unless a third has
		// taken the name meanwhile.
		if err := os.Link(aside, path); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// Release removes the lock file, when it is still this lock's.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	h, _, err := readFile(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("lock: %w", err)
	case h.PID != l.holder.PID || !h.Started.Equal(l.holder.Started) || h.Host != l.holder.Host:
		return nil // taken over by somebody else: theirs now
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

// Read reads the lock of the agent in dir (the API reference's readLock):
// who holds it, alive or not. A folder with no lock fails with ErrNotFound.
func Read(dir string) (Holder, error) {
	h, _, err := readFile(Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, ErrNotFound
	}
	return h, err
}

// HeldBy returns the live process holding the lock of the agent in dir
// (the API reference's heldBy); ok is false when nobody does, or only a
// process that is gone.
func HeldBy(dir string) (h Holder, ok bool, err error) {
	h, err = Read(dir)
	switch {
	case errors.Is(err, ErrNotFound):
		return Holder{}, false, nil
	case err != nil:
		return Holder{}, false, err
	}
	return h, Alive(h), nil
}

func readFile(path string) (Holder, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Holder{}, nil, err
	}
	var h Holder
	if err := json.Unmarshal(raw, &h); err != nil {
		return Holder{}, raw, fmt.Errorf("%s is not a lock: %w", path, err)
	}
	return h, raw, nil
}

// Alive reports whether the process a lock names is still there (the API
// reference's alive): on this host, a signal 0 to its pid that does not
// fail with ESRCH. A lock from another host cannot be checked from here and
// counts as alive, since taking over a live agent's folder is the worse
// mistake; remove the file by hand when that host is gone.
func Alive(h Holder) bool {
	if h.PID <= 0 {
		return false
	}
	if host, _ := os.Hostname(); h.Host != "" && host != "" && h.Host != host {
		return true
	}
	return processAlive(h.PID)
}
