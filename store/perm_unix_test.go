//go:build unix

package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoreRefusesOthers: Open refuses a store whose file, -wal or -shm
// other users may read or write, or whose folder they may write, with a
// *PermissionError whose Fix, once run, lets Open through.
func TestStoreRefusesOthers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string) // dir is 0700, empty
		bad    string                         // the path refused, in dir
		folder bool
	}{
		{"folder writable by all", func(t *testing.T, dir string) { chmod(t, dir, 0o777) }, "", true},
		{"folder writable by its group", func(t *testing.T, dir string) { chmod(t, dir, 0o770) }, "", true},
		{"store readable by all", func(t *testing.T, dir string) { touch(t, filepath.Join(dir, "board.db"), 0o644) }, "board.db", false},
		{"store readable by its group", func(t *testing.T, dir string) { touch(t, filepath.Join(dir, "board.db"), 0o640) }, "board.db", false},
		{"wal readable by all", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, "board.db"), 0o600)
			touch(t, filepath.Join(dir, "board.db-wal"), 0o644)
		}, "board.db-wal", false},
		{"shm writable by all", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, "board.db"), 0o600)
			touch(t, filepath.Join(dir, "board.db-shm"), 0o602)
		}, "board.db-shm", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data dir")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			c.setup(t, dir)
			_, err := Open(t.Context(), SQLiteDSN(dir))
			var perm *PermissionError
			if !errors.As(err, &perm) {
				t.Fatalf("Open = %v, want a *PermissionError", err)
			}
			if want := filepath.Join(dir, c.bad); perm.Path != want || perm.Folder != c.folder {
				t.Errorf("PermissionError = %+v, want path %s, folder %v", perm, want, c.folder)
			}
			if !strings.Contains(err.Error(), perm.Fix()) || !strings.Contains(perm.Fix(), "chmod go-") {
				t.Errorf("Open = %v, want it to name the chmod that fixes it (%s)", err, perm.Fix())
			}
			if c.folder {
				if _, err := os.Stat(filepath.Join(dir, "board.db")); err == nil {
					t.Errorf("Open made board.db in a folder it refused")
				}
			}
			if out, err := exec.Command("sh", "-c", perm.Fix()).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", perm.Fix(), err, out)
			}
			db, err := Open(t.Context(), SQLiteDSN(dir))
			if err != nil {
				t.Fatalf("Open after %s: %v", perm.Fix(), err)
			}
			db.Close()
		})
	}
}

// TestStoreFilesOwnerOnly: a store made in a folder others may read has
// board.db, -wal and -shm at 0600 whatever the umask. Not parallel: the
// umask is the process's.
func TestStoreFilesOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	chmod(t, dir, 0o755)
	defer syscall.Umask(syscall.Umask(0))
	db, err := Open(t.Context(), SQLiteDSN(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Setting.Create().SetID("k").SetUpdatedAt(time.Now()).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"board.db", "board.db-wal", "board.db-shm"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", name, st.Mode().Perm())
		}
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func touch(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, nil, mode); err != nil {
		t.Fatal(err)
	}
	chmod(t, path, mode)
}
