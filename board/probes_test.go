package board_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthv1 "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// probe GETs url with no credential and returns its status and body.
func probe(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// TestProbes: /healthz and /readyz answer without a credential, on the
// board's address and on its metrics address, and say no more than ok or
// ready; grpc.health.v1's Check answers SERVING without a token. When the
// store stops answering, /readyz turns 503 with a short reason (and
// nothing internal) and Check NOT_SERVING, while /healthz stays 200.
func TestProbes(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{MetricsListen: "127.0.0.1:0"})
	c := bt.HTTPClient()
	check := healthv1.NewHealthClient(grpcConn(t, bt, ""))

	for _, base := range []string{bt.URL, bt.MetricsURL} {
		if code, body := probe(t, c, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET %s/healthz = %d %q, want 200 ok", base, code, body)
		}
		if code, body := probe(t, c, base+"/readyz"); code != http.StatusOK || body != "ready\n" {
			t.Errorf("GET %s/readyz = %d %q, want 200 ready", base, code, body)
		}
	}
	res, err := check.Check(t.Context(), &healthv1.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthv1.HealthCheckResponse_SERVING {
		t.Fatalf("Check without a token = %v, %v; want SERVING", res, err)
	}
	if _, err := check.Check(t.Context(), &healthv1.HealthCheckRequest{Service: "acme.v1.Nothing"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check of a service not served, without a token = %v, want not_found", err)
	}
	// Watch stays for a token: it holds a stream open.
	w, err := check.Watch(t.Context(), &healthv1.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("Watch without a token = %v, want unauthenticated", err)
	}

	bt.Store.Close() // the store stops answering
	boardtest.Eventually(t, 10*time.Second, "/readyz 503", func() bool {
		code, _ := probe(t, c, bt.URL+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	for _, base := range []string{bt.URL, bt.MetricsURL} {
		if code, body := probe(t, c, base+"/readyz"); code != http.StatusServiceUnavailable || body != "store: not answering\n" {
			t.Errorf("GET %s/readyz with the store gone = %d %q, want 503 store: not answering", base, code, body)
		}
		if code, _ := probe(t, c, base+"/healthz"); code != http.StatusOK {
			t.Errorf("GET %s/healthz with the store gone = %d, want 200", base, code)
		}
	}
	res, err = check.Check(t.Context(), &healthv1.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthv1.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check with the store gone = %v, %v; want NOT_SERVING", res, err)
	}
}

// TestDrain: when the board is told to stop, it turns not ready first
// (/readyz 503 shutting down, Check NOT_SERVING, a health watcher told
// NOT_SERVING) and goes on serving for DrainDelay: an agent's link opened
// before stays open and new requests are answered, until the board ends
// its streams and stops.
func TestDrain(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second // room for the probes below on a loaded machine
	bt := boardtest.Start(t, boardtest.Options{DrainDelay: delay})
	c := bt.HTTPClient()
	token := bt.OperatorToken("ops", identity.RoleViewer)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	link := openLink(t, bt, "desk")
	watchEnded := make(chan struct{})
	go func() {
		defer close(watchEnded)
		for {
			if _, err := link.s.Receive(); err != nil {
				return
			}
		}
	}()
	hw, err := healthv1.NewHealthClient(grpcConn(t, bt, token)).Watch(ctx, &healthv1.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := hw.Recv(); err != nil || res.GetStatus() != healthv1.HealthCheckResponse_SERVING {
		t.Fatalf("health Watch = %v, %v; want SERVING", res, err)
	}
	if code, _ := probe(t, c, bt.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("GET /readyz before stopping = %d, want 200", code)
	}

	stopped := make(chan struct{})
	asked := time.Now()
	go func() {
		defer close(stopped)
		bt.Stop()
	}()
	defer func() { <-stopped }()

	if res, err := hw.Recv(); err != nil || res.GetStatus() != healthv1.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health Watch once told to stop = %v, %v; want NOT_SERVING", res, err)
	}
	code, body := probe(t, c, bt.URL+"/readyz")
	res, checkErr := healthv1.NewHealthClient(grpcConn(t, bt, "")).Check(ctx, &healthv1.HealthCheckRequest{})
	select {
	case <-watchEnded:
		t.Fatalf("the link ended before the drain delay had passed (after %s)", time.Since(asked))
	case <-stopped:
		t.Fatalf("the board stopped before the drain delay had passed (after %s)", time.Since(asked))
	default:
	}
	if code != http.StatusServiceUnavailable || body != "shutting down\n" {
		t.Errorf("GET /readyz while draining = %d %q, want 503 shutting down", code, body)
	}
	if checkErr != nil || res.GetStatus() != healthv1.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check while draining = %v, %v; want NOT_SERVING", res, checkErr)
	}
	select {
	case <-watchEnded:
	case <-ctx.Done():
		t.Fatal("the link did not end once the board stopped")
	}
	<-stopped
	if took := time.Since(asked); took < delay {
		t.Errorf("the board stopped %s after it was told, want at least the drain delay %s", took, delay)
	}
}
