package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// TestApprovalsDecideAsks: on a terminal (a real pseudo-terminal), decide
// asks with the approval's ask; n decides nothing, y decides.
func TestApprovalsDecideAsks(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	f.governRefunds(t)
	id := f.raise(t, "r1", 40)

	answer := func(line string) (stderr string, err error) {
		t.Helper()
		master, tty := openPTY(t)
		if _, err := master.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		_, stderr, err = runWith(t, f.env, tty, "approvals", "decide", id, "approve", "--board", f.b.URL)
		return stderr, err
	}
	stderr, err := answer("n\n")
	wantExit(t, err, 1, "approval "+id+": not decided")
	if !strings.HasSuffix(stderr, "approve refund 40 EUR to ann? [y/N] ") || !strings.Contains(stderr, f.approval(t, id).GetDigest()) {
		t.Errorf("decide on a terminal: the card and question are not on stderr:\n%s", stderr)
	}
	if got := f.approval(t, id).GetState(); got != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after answering n: %v, want pending", got)
	}
	if _, err := answer("y\n"); err != nil {
		t.Fatalf("decide, answering y: %v", err)
	}
	if got := f.approval(t, id).GetState(); got != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("after answering y: %v, want approved", got)
	}
}

// openPTY opens a pseudo-terminal: what is written to master, tty reads.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return master, tty
}

// TestKeyRevokeAsks: on a terminal (a real pseudo-terminal), key revoke
// asks, naming the key and its publisher; n revokes nothing, y revokes.
func TestKeyRevokeAsks(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	signer := newShelf(t).key(t, "signer")
	f.ok(t, "key", "add", signer.PublicFile, "--publisher", "acme")

	answer := func(line string) (stderr string, err error) {
		t.Helper()
		master, tty := openPTY(t)
		if _, err := master.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		_, stderr, err = runWith(t, f.env, tty, "key", "revoke", signer.KeyID, "--reason", "lost", "--board", f.b.URL)
		return stderr, err
	}
	stderr, err := answer("n\n")
	wantExit(t, err, 1, "key "+signer.KeyID+": not revoked")
	if !strings.HasSuffix(stderr, "revoke key "+signer.KeyID+" of acme? [y/N] ") {
		t.Errorf("revoke on a terminal: the question is not on stderr:\n%s", stderr)
	}
	if out := f.ok(t, "key", "list"); !regexpLine(out, signer.KeyID+`\s.*\s-$`) {
		t.Fatalf("after answering n, want the key not revoked:\n%s", out)
	}
	if _, err := answer("y\n"); err != nil {
		t.Fatalf("revoke, answering y: %v", err)
	}
	if out := f.ok(t, "key", "list"); !regexpLine(out, signer.KeyID+`\s.*\sby ops at \S+$`) {
		t.Fatalf("after answering y, want the key revoked:\n%s", out)
	}
}

// TestIsTerminal: a pseudo-terminal is a terminal; /dev/null (a character
// device), a pipe and a file are not, so a script run with stdin from
// /dev/null is refused for want of --yes rather than asked.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	_, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Error("a pseudo-terminal is not taken for a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, f := range map[string]*os.File{"/dev/null": null, "a pipe": r, "a file": file} {
		if isTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
