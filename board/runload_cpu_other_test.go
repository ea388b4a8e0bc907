//go:build !unix

package board_test

import "time"

// processCPU is zero where the benchmark does not read it.
func processCPU() time.Duration { return 0 }
