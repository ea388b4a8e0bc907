package triggers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/triggers"
)

const hookSecret = "a-webhook-secret-long-enough-to-count"

// listening serves rt's webhooks on a real loopback listener until the
// test ends, and returns its URL.
func listening(t *testing.T, rt *triggers.Runtime) string {
	t.Helper()
	ln, err := triggers.Listen("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func post(t *testing.T, url string, body []byte, header map[string]string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &got)
	return resp.StatusCode, got
}

func webhookRuntime(t *testing.T, got *runs) *triggers.Runtime {
	t.Helper()
	rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{
		{ID: "open", Kind: triggers.KindWebhook, Path: "/hooks/open", Input: map[string]any{"question": "{{body.q}}"}},
		{ID: "signed", Kind: triggers.KindWebhook, Path: "/hooks/signed", Secret: "HOOK_SECRET"},
	}}), nil, triggers.Options{Run: got.run, Getenv: func(name string) string {
		if name == "HOOK_SECRET" {
			return hookSecret
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestWebhookStartsOneRunFromAJSONBody(t *testing.T) {
	var got runs
	url := listening(t, webhookRuntime(t, &got))
	code, body := post(t, url+"/hooks/open", []byte(`{"q":"what time is it?"}`), nil)
	if code != http.StatusOK || body["run_id"] == "" || body["run_id"] == nil {
		t.Fatalf("a JSON body: %d %v, want 200 with the run's id", code, body)
	}
	if got.count() != 1 {
		t.Fatalf("%d runs, want 1", got.count())
	}
	got.mu.Lock()
	s := got.starts[0]
	got.mu.Unlock()
	if s.RunID != body["run_id"] || s.Input["question"] != "what time is it?" || s.Occurrence.Method != "POST" || s.Occurrence.Path != "/hooks/open" {
		t.Errorf("the run started with %+v: want the answer's id and the mapped input", s)
	}
}

func TestWebhookRefusalsStartNothing(t *testing.T) {
	var got runs
	url := listening(t, webhookRuntime(t, &got))
	now := time.Now()
	body := []byte(`{"q":"x"}`)
	for _, tt := range []struct {
		name   string
		path   string
		body   []byte
		header map[string]string
		want   int
	}{
		{"not JSON", "/hooks/open", []byte("q=x"), nil, http.StatusBadRequest},
		{"without what the mapping reads", "/hooks/open", []byte(`{"other":"x"}`), nil, http.StatusBadRequest},
		{"over the limit", "/hooks/open", []byte(`"` + strings.Repeat("x", triggers.MaxWebhookBody) + `"`), nil, http.StatusRequestEntityTooLarge},
		{"unknown path", "/hooks/other", body, nil, http.StatusNotFound},
		{"unsigned", "/hooks/signed", body, nil, http.StatusUnauthorized},
		{"malformed signature", "/hooks/signed", body, map[string]string{triggers.SignatureHeader: "sha256=abc"}, http.StatusUnauthorized},
		{"another secret", "/hooks/signed", body, map[string]string{triggers.SignatureHeader: triggers.Sign([]byte("another-secret-of-enough-length!!"), now, body)}, http.StatusUnauthorized},
		{"another body", "/hooks/signed", body, map[string]string{triggers.SignatureHeader: triggers.Sign([]byte(hookSecret), now, []byte(`{"q":"y"}`))}, http.StatusUnauthorized},
		{"stale", "/hooks/signed", body, map[string]string{triggers.SignatureHeader: triggers.Sign([]byte(hookSecret), now.Add(-triggers.SignatureWindow-time.Minute), body)}, http.StatusUnauthorized},
		{"from the future", "/hooks/signed", body, map[string]string{triggers.SignatureHeader: triggers.Sign([]byte(hookSecret), now.Add(triggers.SignatureWindow+time.Minute), body)}, http.StatusUnauthorized},
	} {
		code, answer := post(t, url+tt.path, tt.body, tt.header)
		if code != tt.want || answer["error"] == nil {
			t.Errorf("%s: %d %v, want %d with an error", tt.name, code, answer, tt.want)
		}
		if msg, _ := answer["error"].(string); strings.Contains(msg, hookSecret) {
			t.Errorf("%s: the answer holds the secret", tt.name)
		}
	}
	resp, err := http.Get(url + "/hooks/open")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET on a POST webhook: %d Allow %q, want 405 Allow POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if n := got.count(); n != 0 {
		t.Fatalf("refused requests started %d runs", n)
	}
	// A good signature, within the window, is taken.
	code, answer := post(t, url+"/hooks/signed", body, map[string]string{triggers.SignatureHeader: triggers.Sign([]byte(hookSecret), now.Add(-time.Minute), body)})
	if code != http.StatusOK || got.count() != 1 {
		t.Fatalf("a signed request: %d %v, %d runs; want 200 and one run", code, answer, got.count())
	}
}

func TestWebhookRunThatFailsIs500AndTheListenerStaysUp(t *testing.T) {
	got := runs{fail: errors.New("the model said no")}
	url := listening(t, webhookRuntime(t, &got))
	code, answer := post(t, url+"/hooks/open", []byte(`{"q":"fail"}`), nil)
	if code != http.StatusInternalServerError || answer["run_id"] == nil {
		t.Fatalf("a failing run: %d %v, want 500 with its run id", code, answer)
	}
	got.mu.Lock()
	got.fail = nil
	got.mu.Unlock()
	if code, _ := post(t, url+"/hooks/open", []byte(`{"q":"again"}`), nil); code != http.StatusOK {
		t.Fatalf("after a failed run: %d, want 200: the listener stays up", code)
	}
}

func TestDeliveryRetriesThenRecordsWithoutFailingTheRun(t *testing.T) {
	var calls atomic.Int32
	var bodies = make(chan map[string]any, 10)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		bodies <- b
	}))
	defer flaky.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusBadGateway)
	}))
	defer down.Close()

	var got runs
	rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{
		{ID: "tell", Kind: triggers.KindWebhook, Path: "/tell", Deliver: &triggers.Delivery{URLEnv: "GOOD_URL", Body: map[string]any{"text": "{{outputs.answer}}"}}},
		{ID: "lost", Kind: triggers.KindWebhook, Path: "/lost", Deliver: &triggers.Delivery{URLEnv: "DOWN_URL", Attempts: 3}},
	}}), nil, triggers.Options{Run: got.run, DeliveryBackoff: time.Millisecond, Getenv: func(name string) string {
		return map[string]string{"GOOD_URL": flaky.URL + "/secret-path", "DOWN_URL": down.URL + "/secret-path"}[name]
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"tell", "lost"} {
		if _, err := rt.Occur(t.Context(), id, triggers.Occurrence{}, time.Time{}); err != nil {
			t.Fatalf("%s: the run failed: %v", id, err)
		}
	}
	last := func(id string) *triggers.Happened {
		for _, r := range rt.Reports() {
			if r.Trigger.ID == id {
				return r.Last
			}
		}
		return nil
	}
	boardtest.Eventually(t, 5*time.Second, "both deliveries settled", func() bool {
		return last("tell").Delivery.State != triggers.DeliveryPending && last("lost").Delivery.State != triggers.DeliveryPending
	})
	if h := last("tell"); h.Delivery.State != triggers.DeliveryDelivered || h.Delivery.Attempts != 3 || !h.OK {
		t.Errorf("the flaky endpoint: %+v, want delivered on the third attempt, the run ok", h)
	}
	if b := <-bodies; b["text"] != "42" {
		t.Errorf("delivered %v: want the body filled from the outputs", b)
	}
	h := last("lost")
	if h.Delivery.State != triggers.DeliveryFailed || h.Delivery.Attempts != 3 || !h.OK {
		t.Errorf("the endpoint that is down: %+v, want failed after 3 attempts, the run still ok", h)
	}
	if strings.Contains(h.Delivery.Error, "secret-path") || h.Delivery.Error == "" {
		t.Errorf("the delivery's error %q: want why, never the URL", h.Delivery.Error)
	}
}

func TestDeliverDoesNotRetryARefusal(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	out := triggers.Deliver(t.Context(), triggers.DeliverConfig{URL: srv.URL, Attempts: 5, Backoff: time.Millisecond}, map[string]any{"text": "x"})
	if out.State != triggers.DeliveryFailed || out.Attempts != 1 || calls.Load() != 1 {
		t.Errorf("a 400: %+v after %d calls, want failed after one", out, calls.Load())
	}
	// Nobody listening: a network error, retried up to the bound.
	srv.Close()
	out = triggers.Deliver(t.Context(), triggers.DeliverConfig{URL: srv.URL, Attempts: 2, Backoff: time.Millisecond}, map[string]any{"text": "x"})
	if out.State != triggers.DeliveryFailed || out.Attempts != 2 || strings.Contains(out.Error, srv.URL) {
		t.Errorf("nobody listening: %+v, want failed after 2 attempts without the URL", out)
	}
}

func TestWebhookOfAPausedTriggerIs503AndStartsNothing(t *testing.T) {
	var got runs
	rt := webhookRuntime(t, &got)
	url := listening(t, rt)
	rt.SetPaused([]string{"open"})
	if code, answer := post(t, url+"/hooks/open", []byte(`{"q":"x"}`), nil); code != http.StatusServiceUnavailable {
		t.Errorf("a paused trigger: %d %v, want 503", code, answer)
	}
	if got.count() != 0 {
		t.Fatalf("a paused trigger started %d runs", got.count())
	}
	rt.SetPaused(nil)
	if code, _ := post(t, url+"/hooks/open", []byte(`{"q":"x"}`), nil); code != http.StatusOK || got.count() != 1 {
		t.Errorf("resumed: %d with %d runs, want 200 and one", code, got.count())
	}
}

// TestWebhookBusyAndLongRuns: a request whose run is still going after
// WebhookWait is answered 202 with the run's id, and the run goes on; with
// MaxWebhooksInFlight requests being handled, one more is answered 503 and
// starts nothing. Under synctest, so the wait passes at once.
func TestWebhookBusyAndLongRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := runs{hold: make(chan struct{})}
		rt, err := triggers.NewRuntime(loaded(t, triggers.File{Flow: "flow.json", Triggers: []triggers.Trigger{
			{ID: "queued", Kind: triggers.KindWebhook, Path: "/hooks/queued", Overlap: triggers.OverlapQueue, QueueLimit: 100},
		}}), nil, triggers.Options{Run: got.run})
		if err != nil {
			t.Fatal(err)
		}
		h := rt.Handler()
		call := func() *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/hooks/queued", strings.NewReader(`{}`)))
			return w
		}
		answers := make(chan *httptest.ResponseRecorder, triggers.MaxWebhooksInFlight)
		for range triggers.MaxWebhooksInFlight {
			go func() { answers <- call() }()
		}
		synctest.Wait() // every request in flight: the first run held, the others queued behind it
		if w := call(); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
			t.Errorf("a request past %d in flight: %d %s, want 503 with Retry-After", triggers.MaxWebhooksInFlight, w.Code, w.Body)
		}
		if n := got.count(); n != 1 {
			t.Errorf("%d runs started, want the first only (the rest queue)", n)
		}
		time.Sleep(triggers.WebhookWait + time.Second)
		synctest.Wait()
		var accepted int
		for range len(answers) {
			w := <-answers
			var body map[string]any
			_ = json.Unmarshal(w.Body.Bytes(), &body)
			if w.Code == http.StatusAccepted && body["run_id"] != nil && body["run_id"] != "" {
				accepted++
			}
		}
		if accepted != triggers.MaxWebhooksInFlight {
			t.Errorf("%d of %d long runs answered 202 with their run's id", accepted, triggers.MaxWebhooksInFlight)
		}
		close(got.hold)
		synctest.Wait()
		if n := got.count(); n != triggers.MaxWebhooksInFlight {
			t.Errorf("%d runs in all, want %d: a 202 run goes on, and the queue drains", n, triggers.MaxWebhooksInFlight)
		}
	})
}

// TestWebhookWhileItsRunGoesIs409: with the default overlap (skip), a
// request to a webhook whose run is still going is answered 409 and
// starts nothing; the run it waits on goes on and is answered 200.
func TestWebhookWhileItsRunGoesIs409(t *testing.T) {
	got := runs{hold: make(chan struct{}), started: make(chan string, 1)}
	url := listening(t, webhookRuntime(t, &got))
	first := make(chan int, 1)
	go func() {
		code, _ := post(t, url+"/hooks/open", []byte(`{"q":"first"}`), nil)
		first <- code
	}()
	<-got.started
	code, answer := post(t, url+"/hooks/open", []byte(`{"q":"second"}`), nil)
	if code != http.StatusConflict || answer["error"] == nil || answer["run_id"] != nil {
		t.Errorf("a request while the trigger's run goes: %d %v, want 409 with why and no run", code, answer)
	}
	if n := got.count(); n != 1 {
		t.Errorf("%d runs started, want the first only", n)
	}
	close(got.hold)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first request, once its run finished: %d, want 200", code)
	}
}

// answering is a transport standing in for an endpoint that answers every
// post with code, noting when each came.
type answering struct {
	code  int
	mu    sync.Mutex
	times []time.Time
}

func (a *answering) RoundTrip(req *http.Request) (*http.Response, error) {
	a.mu.Lock()
	a.times = append(a.times, time.Now())
	a.mu.Unlock()
	return &http.Response{StatusCode: a.code, Status: fmt.Sprintf("%d %s", a.code, http.StatusText(a.code)), Body: io.NopCloser(strings.NewReader("")),
		Header: http.Header{}, Request: req}, nil
}

// TestDeliverBacksOff: a 429 is tried again, after the backoff, then twice
// as long each time up to 32 times it, until the attempts run out. Under
// synctest, so the waits pass at once and are exact.
func TestDeliverBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep := &answering{code: http.StatusTooManyRequests}
		out := triggers.Deliver(t.Context(), triggers.DeliverConfig{Client: &http.Client{Transport: ep}, URL: "http://hooks.invalid/x",
			Attempts: triggers.MaxAttempts, Backoff: time.Second}, map[string]any{"text": "x"})
		if out.State != triggers.DeliveryFailed || out.Attempts != triggers.MaxAttempts || !strings.Contains(out.Error, "429") {
			t.Errorf("an endpoint answering 429: %+v, want failed after %d attempts, saying 429", out, triggers.MaxAttempts)
		}
		var gaps []time.Duration
		for i := 1; i < len(ep.times); i++ {
			gaps = append(gaps, ep.times[i].Sub(ep.times[i-1]))
		}
		want := []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
			32 * time.Second, 32 * time.Second, 32 * time.Second, 32 * time.Second}
		if !slices.Equal(gaps, want) {
			t.Errorf("waits between attempts %v, want %v", gaps, want)
		}
	})
}
