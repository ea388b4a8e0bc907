package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Bounds of an HTTP check.
const (
	// MaxRedirects is the most redirects an HTTP check follows; the status
	// checked is the last answer's.
	MaxRedirects = 3
	// MaxBodyBytes is the most of an answer's body an HTTP check reads, for
	// the detail when its status is not the one wanted.
	MaxBodyBytes = 4 << 10
	// maxHeaderBytes is the most of an answer's headers read.
	maxHeaderBytes = 64 << 10
)

// httpCheck GETs h.URL and wants h.Status (0: 200). Every check opens a new
// connection, so a round proves the endpoint can be reached now, not that
// an old connection is still open.
func httpCheck(h HTTPSpec) func(context.Context) error {
	want := h.Status
	if want == 0 {
		want = http.StatusOK
	}
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: maxHeaderBytes,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxRedirects)
			}
			return nil
		},
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
		if err != nil {
			return withoutURL(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return withoutURL(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == want {
			return nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes))
		msg := fmt.Sprintf("status %d, want %d", resp.StatusCode, want)
		if b := strings.TrimSpace(string(body)); b != "" {
			msg += ": " + b
		}
		return errors.New(msg)
	}
}

// withoutURL is err without the URL a *url.Error repeats: a URL may carry
// a token in its query, and the check's name says which it was.
func withoutURL(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return fmt.Errorf("%s: %w", u.Op, u.Err)
	}
	return err
}
