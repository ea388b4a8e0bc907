//go:build !linux

package linkload

import "time"

// cpuWait is how long this process's threads waited for a CPU; here, it
// cannot be read.
func cpuWait() (time.Duration, bool) { return 0, false }
