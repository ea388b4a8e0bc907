package triggers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The bounds of a delivery.
const (
	// MaxDeliveryBody is the most bytes of a delivery's JSON body; a
	// larger one is not sent, and the delivery fails.
	MaxDeliveryBody = 256 << 10
	// maxBackoffFactor caps the wait between attempts at this many times
	// the first.
	maxBackoffFactor = 32
)

// Outcome is where one delivery stands.
type Outcome struct {
	// State: DeliveryNone, DeliveryPending, DeliveryDelivered or
	// DeliveryFailed.
	State DeliveryState
	// Attempts is how many posts were made.
	Attempts int
	// Error is why the last attempt failed, never naming the URL (it is a
	// credential); "" once delivered.
	Error string
}

// DeliverConfig is where and how Deliver posts.
type DeliverConfig struct {
	// Client posts; nil is a client with a 30 s timeout.
	Client *http.Client
	// URL is where to post: a secret, never logged or reported.
	URL string
	// Attempts: 1 to MaxAttempts; 0 is DefaultAttempts.
	Attempts int
	// Backoff is the wait before the first retry, doubled for each next
	// up to 32 times it; 0 is 1 s.
	Backoff time.Duration
}

// Deliver posts body as JSON to c.URL, and tries again after a network
// error, a 5xx or a 429, waiting Backoff and then twice as long each
// time, up to Attempts posts. Any other answer but a 2xx fails at once:
// asking again would get the same no. It never fails the run it delivers
// for: the outcome says what came of it, without the URL.
func Deliver(ctx context.Context, c DeliverConfig, body any) Outcome {
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	c.Attempts = min(c.Attempts, MaxAttempts)
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	data, err := json.Marshal(body)
	switch {
	case err != nil:
		return Outcome{State: DeliveryFailed, Error: "the body is not JSON: " + err.Error()}
	case len(data) > MaxDeliveryBody:
		return Outcome{State: DeliveryFailed, Error: fmt.Sprintf("the body is %d bytes: at most %d", len(data), MaxDeliveryBody)}
	}
	out := Outcome{State: DeliveryPending}
	wait := c.Backoff
	for out.Attempts < c.Attempts {
		if out.Attempts > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				out.State = DeliveryFailed
				return out
			case <-t.C:
			}
			wait = min(wait*2, c.Backoff*maxBackoffFactor)
		}
		out.Attempts++
		retry, err := post(ctx, c.Client, c.URL, data)
		if err == nil {
			return Outcome{State: DeliveryDelivered, Attempts: out.Attempts}
		}
		out.Error = err.Error()
		if !retry {
			break
		}
	}
	out.State = DeliveryFailed
	return out
}

// post makes one attempt; retry says whether another may do better. Its
// error never holds the URL.
func post(ctx context.Context, client *http.Client, url string, data []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return false, errors.New("the delivery URL cannot be used")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		// A *url.Error names the URL: only its cause is kept.
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return true, fmt.Errorf("the endpoint could not be reached: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("the endpoint answered %s", resp.Status)
	}
	return false, fmt.Errorf("the endpoint answered %s", resp.Status)
}
