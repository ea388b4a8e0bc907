package packages

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// BenchmarkScanVerify: Scan and Verify of a 50 MiB package of 5,000
// files. It reports the peak of the Go heap while scanning (heap-MiB),
// sampled by a goroutine, above what the benchmark holds itself.
func BenchmarkScanVerify(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(helloFlow), 0o644); err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 50<<20/5000)
	for i := range 5000 {
		rand.Read(chunk)
		p := filepath.Join(dir, fmt.Sprintf("data/%02d/%04d.bin", i%50, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, chunk, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var pkg bytes.Buffer
	m, err := Build(dir, Meta{Name: "acme/big", Version: "1.0.0"}, &pkg, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	digest, _ := m.Digest()
	data := pkg.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(len(data))/(1<<20), "archive-MiB")

	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := heap()
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if h := heap(); h > peak {
					peak = h
				}
			}
		}
	}()
	b.ResetTimer()
	for b.Loop() {
		p, err := Scan(bytes.NewReader(data), Limits{})
		if err != nil {
			b.Fatal(err)
		}
		if err := Verify(p, digest); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(done)
	<-stopped
	b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "heap-MiB")
}
