package main

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether r is a terminal: a file the terminal's own
// request (TCGETS) answers for. /dev/null, a character device too, is
// not one.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return e == 0
}
