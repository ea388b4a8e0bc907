package subscription

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrMemoryUnreadable: the memory file is there and holds no word of the
// board's that can be used (it cannot be read, or is not what [Subscription.Set]
// writes). The agent then answers as if the board never spoke.
var ErrMemoryUnreadable = errors.New("subscription memory unreadable")

// MemoryPath is the usual memory file of an agent served from dir:
// dir/.symphonix/subscription.json.
func MemoryPath(dir string) string {
	return filepath.Join(dir, ".symphonix", "subscription.json")
}

// memory is the memory file: the tools the board last switched on. On is
// always written, [] when the board switched everything off, so a file
// without it is not a word the board said.
type memory struct {
	On *[]string `json:"on"`
}

// readMemory returns the names kept in path. found is false when there is
// no file: an agent that never heard from its board.
func readMemory(path string) (names []string, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("subscription: %w: %w", ErrMemoryUnreadable, err)
	}
	var m memory
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, fmt.Errorf("subscription: %w: %s: %w", ErrMemoryUnreadable, path, err)
	}
	if m.On == nil {
		return nil, false, fmt.Errorf("subscription: %w: %s has no \"on\"", ErrMemoryUnreadable, path)
	}
	for _, name := range *m.On {
		if strings.TrimSpace(name) == "" {
			return nil, false, fmt.Errorf("subscription: %w: %s names an empty tool", ErrMemoryUnreadable, path)
		}
	}
	return *m.On, true, nil
}

// writeMemory keeps names in path, atomically: a crash leaves the old word
// or the new one, never half of one. The file is written beside path,
// synced, renamed over it, and the folder synced so the rename survives.
func writeMemory(path string, names []string) (err error) {
	data, err := json.Marshal(memory{On: &names})
	if err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("subscription: keeping the board's word: %w", err)
	}
	return nil
}
