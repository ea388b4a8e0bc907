package board_test

import (
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestSetupBurstMemory: a burst of setups, each with a good link and so
// each wanting an argon2id hash of 19 MiB, holds the board's heap to about
// a hash per slot: the rest are answered 503 at once instead of hashing
// side by side. Not parallel: the heap measured is the whole program's.
func TestSetupBurstMemory(t *testing.T) {
	const burst = 32
	bt := boardtest.Start(t, boardtest.Options{})
	links := make([]string, burst)
	for i := range links {
		_, link, err := bt.Board.Users().Add(t.Context(), identity.AddUser{Email: "p" + strconv.Itoa(i) + "@example.com", Role: identity.RoleViewer, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		links[i] = link.Token
	}
	runtime.GC()
	base := heapBytes()
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() { // samples the heap until stopped: a measure, not a wait
		defer close(sampled)
		for {
			peak = max(peak, heapBytes())
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	codes := make(chan int, burst)
	var wg sync.WaitGroup
	for _, token := range links {
		wg.Go(func() {
			resp, _ := bt.PostJSON("/auth/setup", map[string]string{"token": token, "password": password}, "", "")
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	if got[http.StatusOK]+got[http.StatusServiceUnavailable] != burst || got[http.StatusOK] == 0 {
		t.Errorf("answers to %d concurrent setups: %v, want 200s and 503s", burst, got)
	}
	// A hash per slot live, and as much again of garbage the collector
	// lets grow before it runs, and room for the rest of the program.
	slots := uint64(runtime.GOMAXPROCS(0))
	bound := 2*(slots+1)*19<<20 + 32<<20
	grew := peak - min(peak, base)
	t.Logf("the heap grew by %d MiB during %d concurrent setups (%v)", grew>>20, burst, got)
	if grew > bound {
		t.Errorf("the heap grew by %d MiB during the burst, want at most %d MiB (%d slots)", grew>>20, bound>>20, slots)
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
