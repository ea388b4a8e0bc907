package linkload

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

// Snapshot is what a process holds at one moment.
type Snapshot struct {
	// HeapInuse and StackInuse: the runtime's in-use heap spans and
	// goroutine stacks, from runtime.MemStats.
	HeapInuse  uint64 `json:"heap_inuse"`
	StackInuse uint64 `json:"stack_inuse"`
	// HeapAlloc: live heap objects.
	HeapAlloc uint64 `json:"heap_alloc"`
	// Sys: everything the runtime has from the OS.
	Sys uint64 `json:"sys"`
	// RSS: resident set size from /proc/self/status; 0 where there is none.
	// It includes memory outside the Go heap (the SQLite page cache).
	RSS        uint64 `json:"rss"`
	Goroutines int    `json:"goroutines"`
}

// Measure collects garbage until goroutine stacks stop shrinking, hands
// freed memory back to the OS, and takes a snapshot. A collection halves a
// stack that uses less than a quarter of itself, so a goroutine that once
// ran deep (a store write) gets back to its steady size only after a few
// collections; a long-running board has them on its own.
func Measure() Snapshot {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	for range 10 {
		stack := m.StackInuse
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.StackInuse >= stack {
			break
		}
	}
	debug.FreeOSMemory()
	runtime.ReadMemStats(&m)
	return Snapshot{
		HeapInuse:  m.HeapInuse,
		StackInuse: m.StackInuse,
		HeapAlloc:  m.HeapAlloc,
		Sys:        m.Sys,
		RSS:        rss(),
		Goroutines: runtime.NumGoroutine(),
	}
}

// InUse is heap and stack in use: the figure the 64 KiB target is about.
func (s Snapshot) InUse() uint64 { return s.HeapInuse + s.StackInuse }

// PerAgent is what n agents added between before and after.
type PerAgent struct {
	// Bytes: HeapInuse+StackInuse.
	Bytes float64
	// LiveBytes: HeapAlloc+StackInuse, without the heap's fragmentation.
	LiveBytes  float64
	RSS        float64
	Goroutines float64
}

// Per divides what grew from before to s by n.
func (s Snapshot) Per(before Snapshot, n int) PerAgent {
	d := func(after, before uint64) float64 { return (float64(after) - float64(before)) / float64(n) }
	return PerAgent{
		Bytes:      d(s.InUse(), before.InUse()),
		LiveBytes:  d(s.HeapAlloc+s.StackInuse, before.HeapAlloc+before.StackInuse),
		RSS:        d(s.RSS, before.RSS),
		Goroutines: (float64(s.Goroutines) - float64(before.Goroutines)) / float64(n),
	}
}

// rss reads VmRSS from /proc/self/status, in bytes.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest) // "123456 kB"
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0
		}
		kb, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
