package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PermissionError is an SQLite store file that users other than its
// owner may read or write, or a folder of one that they may write. The
// store holds the board's signing key: whoever reads the file can mint any
// token, and whoever writes the folder can put a store with their own key
// in its place. Open refuses until Fix has been run.
type PermissionError struct {
	Path   string
	Mode   fs.FileMode
	Folder bool
}

// Fix is the command that closes Path to other users.
func (e *PermissionError) Fix() string {
	if e.Folder {
		return "chmod go-w " + shellQuote(e.Path)
	}
	return "chmod go-rw " + shellQuote(e.Path)
}

func (e *PermissionError) Error() string {
	if e.Folder {
		return fmt.Sprintf("store: the folder %s can be written by other users (mode %v), who could put their own store, with their own signing key, in its place; run: %s", e.Path, e.Mode, e.Fix())
	}
	return fmt.Sprintf("store: %s can be read or written by other users (mode %v), and it holds the board's signing key; run: %s", e.Path, e.Mode, e.Fix())
}

// The permission bits a store file and its folder may not have: others
// reading or writing the file, others writing the folder. A folder others
// may read shows them the files' names, not what is in them.
const (
	othersRW fs.FileMode = 0o066
	othersW  fs.FileMode = 0o022
)

// prepareFolder creates the folder of the SQLite file at path (0700), or
// checks that other users may not write the one there.
func prepareFolder(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: create its folder: %w", err)
	}
	return checkMode(dir, othersW, true)
}

// createOwnerOnly creates the SQLite file at path, empty and 0600
// whatever the umask, unless it exists. SQLite would create it 0644 less
// the umask; it creates the -wal and -shm files with the mode of the
// database file, so they are 0600 too.
func createOwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	return nil
}

// checkFiles checks that the SQLite file at path and its -wal and -shm
// files, those that exist, are their owner's alone.
func checkFiles(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := checkMode(p, othersRW, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// checkMode fails with a *PermissionError when path has any of the
// permission bits in not.
func checkMode(path string, not fs.FileMode, folder bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if modesMatter && st.Mode().Perm()&not != 0 {
		return &PermissionError{Path: path, Mode: st.Mode(), Folder: folder}
	}
	return nil
}

// shellQuote quotes p for a POSIX shell when it needs quoting.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
