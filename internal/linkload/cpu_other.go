//go:build !unix

package linkload

import "time"

// cpuTime is the CPU time this process has used; here, unknown.
func cpuTime() time.Duration { return 0 }
