//go:build !unix

package lock

import "os"

// processAlive: where there is no signal 0, a process that can be found is
// alive.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
