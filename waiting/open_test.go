package waiting

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenOrMemory(t *testing.T) {
	t.Parallel()
	notADatabase := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".symphonix"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(Path(dir), []byte(strings.Repeat("not sqlite ", 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	unwritable := func(t *testing.T) string {
		dir := t.TempDir()
		if os.Geteuid() == 0 {
			// root writes through any mode; a folder under a regular file
			// cannot be made by anybody.
			f := filepath.Join(dir, "afile")
			if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(f, "x")
		}
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return dir
	}
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		onDisk  bool
		wantWhy string // in the description when in memory
	}{
		{name: "a writable folder", dir: func(t *testing.T) string { return t.TempDir() }, onDisk: true},
		{name: "a file that is not a database", dir: notADatabase, wantWhy: "not a database"},
		{name: "a folder that cannot be written", dir: unwritable, wantWhy: "create folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tt.dir(t)
			c, desc := OpenOrMemory(t.Context(), dir, Config{})
			if c == nil {
				t.Fatal("OpenOrMemory returned no checkpointer")
			}
			closer, ok := c.(io.Closer)
			if !ok {
				t.Fatalf("OpenOrMemory returned a %T, which is not an io.Closer", c)
			}
			t.Cleanup(func() { closer.Close() })
			s, isStore := c.(*Store)
			if isStore != tt.onDisk {
				t.Fatalf("OpenOrMemory(%s) = %T (%s), want on disk %v", tt.name, c, desc, tt.onDisk)
			}
			if tt.onDisk {
				abs, _ := filepath.Abs(s.Path())
				if want := "waiting runs are kept in " + abs; desc != want {
					t.Errorf("description = %q, want %q", desc, want)
				}
			} else {
				const prefix = "waiting runs are kept in memory (they are lost on restart): "
				if !strings.HasPrefix(desc, prefix) || !strings.Contains(desc, tt.wantWhy) {
					t.Errorf("description = %q, want %q and a reason mentioning %q", desc, prefix, tt.wantWhy)
				}
			}
			exercise(t, c) // either way, it works for as long as the process lives
		})
	}
}

func TestOpenOrMemorySaysWhatItForgot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &clock{}
	dir := t.TempDir()
	s := openStore(t, dir, Config{Now: c.Now})
	for _, thread := range []string{"a", "b"} {
		if err := s.Put(ctx, thread, []byte(thread)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	c.advance(31 * 24 * time.Hour)
	cp, desc := OpenOrMemory(ctx, dir, Config{Now: c.Now})
	defer cp.(io.Closer).Close()
	if !strings.HasSuffix(desc, "(forgot 2 threads nobody had touched for 30 days)") {
		t.Errorf("description = %q, want it to say 2 threads were forgotten", desc)
	}
}
