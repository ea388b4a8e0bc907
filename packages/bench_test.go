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
	// Read from a file, as a package is read, so the heap holds only what
	// Scan does.
	file := filepath.Join(b.TempDir(), "big.tgz")
	if err := os.WriteFile(file, pkg.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(pkg.Len())
	pkg = bytes.Buffer{}
	b.SetBytes(size)

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
		f, err := os.Open(file)
		if err != nil {
			b.Fatal(err)
		}
		p, err := Scan(f, Limits{})
		f.Close()
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
	b.ReportMetric(float64(size)/(1<<20), "archive-MiB")
	b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "heap-MiB")
}
