//go:build unix

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/store"
)

// TestSecondBoardRefused: a second board on the --data of a running one
// does not start, and says the first one's PID.
func TestSecondBoardRefused(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	serveBoard(t, data)
	err := startBoard(t, data)
	var locked *store.LockedError
	if !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("second board = %v, want a *store.LockedError naming pid %d", err, os.Getpid())
	}
	if want := "pid " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("second board = %v, want it to name %s", err, want)
	}
	// Commands on the store work beside the running board.
	runOK(t, "token", "list", "--data", data)
}

// TestKilledBoardLeavesNoLock: a board in another process holds the
// store, naming its PID; killed with SIGKILL, it leaves its lock file but
// not its lock, and the next board starts. Not parallel: a process forked
// while another test holds a lock holds it too, until it execs.
func TestKilledBoardLeavesNoLock(t *testing.T) {
	data := t.TempDir()
	cmd := exec.Command(os.Args[0]) // the board, by TestMain
	cmd.Env = append(os.Environ(), boardArgsEnv+"=--data\n"+data+"\n--listen\n127.0.0.1:0")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				listening <- true
				break
			}
		}
		close(listening)
		for sc.Scan() { // the pipe is drained until the process ends
		}
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatal("the board process ended without listening")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the board process did not start in 60 s")
	}

	err = startBoard(t, data)
	var locked *store.LockedError
	if !errors.As(err, &locked) || locked.PID != cmd.Process.Pid {
		t.Fatalf("board beside the process = %v, want a *store.LockedError naming pid %d", err, cmd.Process.Pid)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if b, err := os.ReadFile(filepath.Join(data, "board.db.lock")); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("lock file after SIGKILL = %q, %v; want the dead board's pid left in it", b, err)
	}
	serveBoard(t, data)
}

// TestBoardRefusesOpenStore: a board whose store other users may read, or
// whose folder they may write, does not start, and names the chmod that
// fixes it.
func TestBoardRefusesOpenStore(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	err := startBoard(t, data)
	var perm *store.PermissionError
	if !errors.As(err, &perm) || perm.Path != data || !strings.Contains(err.Error(), "chmod go-w "+data) {
		t.Fatalf("board on a folder anyone may write = %v, want a *store.PermissionError naming chmod go-w %s", err, data)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stop := serveBoard(t, data)
	stop()
	db := filepath.Join(data, "board.db")
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	err = startBoard(t, data)
	if !errors.As(err, &perm) || perm.Path != db || !strings.Contains(err.Error(), "chmod go-rw "+db) {
		t.Fatalf("board on a board.db anyone may read = %v, want a *store.PermissionError naming chmod go-rw %s", err, db)
	}
}
