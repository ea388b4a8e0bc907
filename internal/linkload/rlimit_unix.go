//go:build unix

package linkload

import (
	"fmt"
	"syscall"
)

// raiseFileLimit raises this process's soft limit on open files to its hard
// limit, so that it and the processes it starts (which inherit it) can hold
// a socket per agent, and returns the limit.
func raiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit: %w", err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, fmt.Errorf("setrlimit: %w", err)
		}
	}
	return lim.Cur, nil
}
