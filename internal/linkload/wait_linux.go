package linkload

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuWait is how long this process's threads have waited, runnable, for a
// CPU the kernel gave to something else (schedstat's run_delay, summed over
// the threads alive now); ok is false where it cannot be read.
func cpuWait() (d time.Duration, ok bool) {
	tasks, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	for _, path := range tasks {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		fields := strings.Fields(string(raw))
		if len(fields) < 2 {
			return 0, false
		}
		ns, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, false
		}
		d += time.Duration(ns)
	}
	return d, true
}
