//go:build unix

package lock

import (
	"errors"
	"syscall"
)

// processAlive: signal 0 checks that pid exists without signalling it. Only
// ESRCH says it is gone; EPERM is a live process of another user.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}
