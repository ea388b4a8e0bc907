package serve

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

// LockPath is where the lock of the agent in dir is kept.
func LockPath(dir string) string { return filepath.Join(dir, ".symphonix", "agent.lock") }

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
	msg := fmt.Sprintf("serve: the folder is served already: %s is held by pid %d", e.Path, h.PID)
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

// ErrNoLock is ReadLock on a folder nobody holds.
var ErrNoLock = errors.New("serve: no lock")

// Lock is a folder's lock, held by this process until Release.
type Lock struct {
	path   string
	holder Holder
}

// Holder is what the lock file says.
func (l *Lock) Holder() Holder { return l.holder }

// TakeLock takes the lock of the agent in dir for h (the seed's takeLock):
// one served agent per folder. It fails with a *HeldError naming the holder
// when a live process holds it (see Alive) — this process included, so a
// folder cannot be served twice from one process either. A lock whose
// process is gone is taken over. A lock file that cannot be read as one is
// stale too: whoever wrote it half is gone, since the file is written
// whole before it gets its name.
func TakeLock(dir string, h Holder) (*Lock, error) {
	path := LockPath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("serve: lock: %w", err)
	}
	data, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("serve: lock: %w", err)
	}
	data = append(data, '\n')
	for range 3 {
		err := create(path, data)
		if err == nil {
			return &Lock{path: path, holder: h}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("serve: lock: %w", err)
		}
		old, raw, err := readLock(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // released between the two: try again
		case err != nil && raw == nil:
			return nil, fmt.Errorf("serve: lock: %w", err)
		case err == nil && Alive(old):
			return nil, &HeldError{Path: path, Holder: old}
		}
		if err := setAside(path, raw); err != nil {
			return nil, fmt.Errorf("serve: lock: taking over %s: %w", path, err)
		}
	}
	return nil, fmt.Errorf("serve: lock: %s changed hands while it was being taken; try again", path)
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
	h, _, err := readLock(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("serve: lock: %w", err)
	case h.PID != l.holder.PID || !h.Started.Equal(l.holder.Started) || h.Host != l.holder.Host:
		return nil // taken over by somebody else: theirs now
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("serve: lock: %w", err)
	}
	return nil
}

// ReadLock reads the lock of the agent in dir (the seed's readLock): who
// holds it, alive or not. A folder with no lock fails with ErrNoLock.
func ReadLock(dir string) (Holder, error) {
	h, _, err := readLock(LockPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, ErrNoLock
	}
	return h, err
}

// HeldBy returns the live process holding the lock of the agent in dir
// (the seed's heldBy); ok is false when nobody does, or only a process
// that is gone.
func HeldBy(dir string) (h Holder, ok bool, err error) {
	h, err = ReadLock(dir)
	switch {
	case errors.Is(err, ErrNoLock):
		return Holder{}, false, nil
	case err != nil:
		return Holder{}, false, err
	}
	return h, Alive(h), nil
}

func readLock(path string) (Holder, []byte, error) {
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

// Alive reports whether the process a lock names is still there (the
// seed's alive): on this host, a signal 0 to its pid that does not fail
// with ESRCH. A lock from another host cannot be checked from here and
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
