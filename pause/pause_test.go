package pause_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/pause"
)

func TestWriteRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got, err := pause.Read(dir)
	if err != nil || got.Paused || got.Origin != "" {
		t.Fatalf("Read of a folder never paused = %+v, %v; want the zero State", got, err)
	}
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	s := pause.State{Paused: true, Reason: "the database is being migrated", By: "ann", Time: at, Origin: pause.Local}
	if err := pause.Write(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err = pause.Read(dir)
	if err != nil || !got.Equal(s) {
		t.Fatalf("Read after Write = %+v, %v; want %+v", got, err, s)
	}
	fi, err := os.Stat(pause.Path(dir))
	if err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(pause.Path(dir)) != filepath.Join(dir, ".symphonix") {
		t.Errorf("the pause file %s: %v, %v; want it 0600 in .symphonix", pause.Path(dir), fi.Mode(), err)
	}
	if want := "paused by ann at 2026-12-02T08:00:00Z (on this machine): the database is being migrated"; got.Say() != want {
		t.Errorf("Say = %q, want %q", got.Say(), want)
	}
	resumed := pause.State{By: "bob", Time: at, Origin: pause.Board}
	if err := pause.Write(dir, resumed); err != nil {
		t.Fatal(err)
	}
	if got, err = pause.Read(dir); err != nil || got.Paused || got.By != "bob" {
		t.Fatalf("Read after the resume = %+v, %v", got, err)
	}
	if want := "taking work: resumed by bob at 2026-12-02T08:00:00Z (on the board)"; got.Say() != want {
		t.Errorf("Say = %q, want %q", got.Say(), want)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".symphonix"))
	if len(entries) != 1 {
		t.Errorf(".symphonix holds %d files after two writes, want the pause file only", len(entries))
	}
}

func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	at := time.Now()
	for name, tt := range map[string]struct {
		s     pause.State
		field string
	}{
		"no origin":      {pause.State{Paused: true, Time: at}, "origin"},
		"another origin": {pause.State{Paused: true, Time: at, Origin: "moon"}, "origin"},
		"no time":        {pause.State{Paused: true, Origin: pause.Local}, "time"},
		"a long reason":  {pause.State{Paused: true, Time: at, Origin: pause.Local, Reason: strings.Repeat("r", pause.MaxReason+1)}, "reason"},
		"a long by":      {pause.State{Paused: true, Time: at, Origin: pause.Local, By: strings.Repeat("b", pause.MaxBy+1)}, "by"},
		"not UTF-8":      {pause.State{Paused: true, Time: at, Origin: pause.Local, Reason: "\xff"}, "reason"},
	} {
		dir := t.TempDir()
		err := pause.Write(dir, tt.s)
		if err == nil || !strings.Contains(err.Error(), tt.field+":") {
			t.Errorf("Write with %s = %v, want an error naming %s", name, err, tt.field)
		}
		if _, err := os.Stat(pause.Path(dir)); err == nil {
			t.Errorf("Write with %s wrote a file", name)
		}
	}
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"not JSON":        `paused`,
		"an unknown key":  `{"paused": true, "origin": "local", "time": "2026-12-02T09:00:00Z", "until": "never"}`,
		"no origin":       `{"paused": true, "time": "2026-12-02T09:00:00Z"}`,
		"too large":       `{"paused": true, "reason": "` + strings.Repeat("x", 5000) + `"}`,
		"a wrong type":    `{"paused": "yes"}`,
		"an empty object": `{}`,
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".symphonix"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pause.Path(dir), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := pause.Read(dir); err == nil || !strings.Contains(err.Error(), pause.Path(dir)) {
			t.Errorf("Read of %s = %v, want an error naming the file", name, err)
		}
	}
}
