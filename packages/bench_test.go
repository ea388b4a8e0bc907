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
	peak := peakHeap(func() {
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
	})
	b.ReportMetric(float64(size)/(1<<20), "archive-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
}

// TestScanStreams: Scan and Verify of a 32 MiB package of four 8 MiB
// files that do not compress hold neither the archive nor a file: the Go
// heap grows by less than 8 MiB while they run (BenchmarkScanVerify
// measures the same at 50 MiB and 5,000 files).
func TestScanStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 32 MiB package")
	}
	// Not parallel: the heap measured is the whole process's.
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"flow.json": helloFlow})
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 8<<20)
	for i := range 4 {
		rand.Read(noise)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("data/%d.bin", i)), noise, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noise = nil
	file := filepath.Join(t.TempDir(), "big.tgz")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(dir, Meta{Name: "acme/big", Version: "1.0.0"}, out, Limits{})
	if cerr := out.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	digest, _ := m.Digest()
	peak := peakHeap(func() {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p, err := Scan(f, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(p, digest); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("the heap grew by %.1f MiB", float64(peak)/(1<<20))
	if peak >= 8<<20 {
		t.Errorf("the heap grew by %.1f MiB while Scan read a 32 MiB package, want less than 8 MiB", float64(peak)/(1<<20))
	}
}

// peakHeap runs f and returns the highest Go heap seen while it ran
// (sampled every millisecond), above the heap after a collection before.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := heap()
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	defer func() {
		select {
		case <-done:
		default: // f ended the test: stop sampling all the same
			close(done)
			<-stopped
		}
	}()
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
	f()
	close(done)
	<-stopped
	if h := heap(); h > peak {
		peak = h
	}
	return peak - min(peak, base)
}
