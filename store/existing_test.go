package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenExistingSQLite: no file, no store, and nothing made, not even
// the folder; once Open has made it, OpenExisting opens it.
func TestOpenExistingSQLite(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	_, err := OpenExisting(t.Context(), SQLiteDSN(dir))
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNoStore) || nf.Path != filepath.Join(dir, "board.db") {
		t.Fatalf("OpenExisting(missing) = %v, want a *NotFoundError naming %s", err, filepath.Join(dir, "board.db"))
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting(missing) made %s: %v", dir, err)
	}
	db, err := Open(t.Context(), SQLiteDSN(dir))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = OpenExisting(t.Context(), "file:"+filepath.Join(dir, "board.db"))
	if err != nil {
		t.Fatalf("OpenExisting(made by Open) = %v", err)
	}
	db.Close()
	if _, err := OpenExisting(t.Context(), "mysql://x"); !errors.Is(err, ErrDSN) {
		t.Errorf("OpenExisting(mysql://x) = %v, want ErrDSN", err)
	}
}
