package linkload

import (
	"slices"
	"sync"
	"time"
)

// RTT sums up ping round trips.
type RTT struct {
	Samples int           `json:"samples"`
	P50     time.Duration `json:"p50"`
	P99     time.Duration `json:"p99"`
	Max     time.Duration `json:"max"`
}

// Summarize returns the nearest-rank 50th and 99th percentiles of samples.
// It sorts samples.
func Summarize(samples []time.Duration) RTT {
	if len(samples) == 0 {
		return RTT{}
	}
	slices.Sort(samples)
	return RTT{
		Samples: len(samples),
		P50:     Percentile(samples, 50),
		P99:     Percentile(samples, 99),
		Max:     samples[len(samples)-1],
	}
}

// Percentile is the nearest-rank p-th percentile of sorted, which must not
// be empty: the smallest sample that at least p percent of the samples do
// not exceed.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p / 100 * float64(len(sorted)))
	if float64(rank) < p/100*float64(len(sorted)) {
		rank++ // ceil
	}
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// recorder keeps round trips while it is recording.
type recorder struct {
	mu        sync.Mutex
	recording bool
	samples   []time.Duration
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	if r.recording {
		r.samples = append(r.samples, d)
	}
	r.mu.Unlock()
}

func (r *recorder) start() {
	r.mu.Lock()
	r.recording = true
	r.mu.Unlock()
}

// stop ends recording and returns what was recorded.
func (r *recorder) stop() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recording = false
	s := r.samples
	r.samples = nil
	return s
}
