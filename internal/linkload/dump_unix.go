//go:build unix

package linkload

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// dumpOnSignal writes the process's goroutines to path whenever it gets
// SIGUSR1: how to see what a board that stopped making progress waits on.
func dumpOnSignal(path string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		for range c {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
			}
		}
	}()
}
