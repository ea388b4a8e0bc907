package lock_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/lock"
)

var started = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// TestOnePerFolder: a second take fails while the first holds it,
// naming the holder; after Release it can be taken again.
func TestOnePerFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := lock.Take(dir, lock.Me("http://127.0.0.1:1111", started))
	if err != nil {
		t.Fatal(err)
	}
	h, err := lock.Read(dir)
	if err != nil || h.PID != os.Getpid() || h.URL != "http://127.0.0.1:1111" || !h.Started.Equal(started) || h.Host == "" {
		t.Errorf("Read = %+v, %v; want this process at :1111", h, err)
	}
	if st, err := os.Stat(lock.Path(dir)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v; want mode 0600", st.Mode(), err)
	}

	_, err = lock.Take(dir, lock.Me("http://127.0.0.1:2222", started))
	var held *lock.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Take = %v, want a *HeldError", err)
	}
	if held.Holder.PID != os.Getpid() || held.Holder.URL != "http://127.0.0.1:1111" {
		t.Errorf("HeldError.Holder = %+v, want the first holder", held.Holder)
	}
	for _, want := range []string{"pid " + strconv.Itoa(os.Getpid()), "http://127.0.0.1:1111"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name the holder's %s", err, want)
		}
	}
	if h, ok, err := lock.HeldBy(dir); !ok || err != nil || h.URL != "http://127.0.0.1:1111" {
		t.Errorf("HeldBy = %+v, %v, %v; want the first holder", h, ok, err)
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Read(dir); !errors.Is(err, lock.ErrNotFound) {
		t.Errorf("Read after Release = %v, want ErrNotFound", err)
	}
	second, err := lock.Take(dir, lock.Me("http://127.0.0.1:2222", started))
	if err != nil {
		t.Fatalf("Take after Release: %v", err)
	}
	second.Release()
}

// goneProcess returns the pid of a process that has ended.
func goneProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func writeLock(t *testing.T, dir string, h lock.Holder) {
	t.Helper()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	writeLockBytes(t, dir, b)
}

func writeLockBytes(t *testing.T, dir string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(lock.Path(dir)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock.Path(dir), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStale: a lock whose process is gone, or a file that is not a
// lock, is taken over; one from another host is not.
func TestStale(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	tests := []struct {
		name     string
		write    func(t *testing.T, dir string)
		takeOver bool
	}{
		{
			name: "process gone",
			write: func(t *testing.T, dir string) {
				writeLock(t, dir, lock.Holder{PID: goneProcess(t), Host: host, Started: started, URL: "http://127.0.0.1:3333"})
			},
			takeOver: true,
		},
		{
			name:     "not a lock",
			write:    func(t *testing.T, dir string) { writeLockBytes(t, dir, []byte("{\"pid\": 12")) },
			takeOver: true,
		},
		{
			name: "no pid",
			write: func(t *testing.T, dir string) {
				writeLock(t, dir, lock.Holder{Host: host, URL: "http://127.0.0.1:3333"})
			},
			takeOver: true,
		},
		{
			name: "another host",
			write: func(t *testing.T, dir string) {
				writeLock(t, dir, lock.Holder{PID: goneProcess(t), Host: host + "-elsewhere", Started: started, URL: "http://10.0.0.9:3333"})
			},
			takeOver: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.write(t, dir)
			l, err := lock.Take(dir, lock.Me("http://127.0.0.1:4444", started))
			if !tt.takeOver {
				var held *lock.HeldError
				if !errors.As(err, &held) {
					t.Fatalf("Take over %s = %v, want a *HeldError", tt.name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Take over a stale lock (%s): %v", tt.name, err)
			}
			defer l.Release()
			if h, err := lock.Read(dir); err != nil || h.PID != os.Getpid() || h.URL != "http://127.0.0.1:4444" {
				t.Errorf("Read after the take-over = %+v, %v; want this process", h, err)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".symphonix", "*"))
			if len(left) != 1 {
				t.Errorf("files in .symphonix = %q, want the lock alone", left)
			}
		})
	}
}

// TestReleaseLeavesAnothers: Release removes the lock only while it
// is this lock's.
func TestReleaseLeavesAnothers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := lock.Take(dir, lock.Me("http://127.0.0.1:5555", started))
	if err != nil {
		t.Fatal(err)
	}
	other := lock.Holder{PID: os.Getpid(), Host: "x", Started: started.Add(time.Hour), URL: "http://127.0.0.1:6666"}
	writeLock(t, dir, other)
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if h, err := lock.Read(dir); err != nil || h.URL != other.URL {
		t.Errorf("Read after releasing a lock taken over = %+v, %v; want the other holder's", h, err)
	}
}
