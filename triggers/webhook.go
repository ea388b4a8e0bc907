package triggers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// EnvBind is the environment variable naming the address the trigger
// listener binds when the agent is not told one: its own, never implied by
// the chat's, because whatever reaches the listener starts the flow.
const EnvBind = "TRIGGER_BIND"

// SignatureHeader is the header a signed webhook's request carries:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the
// secret>".
const SignatureHeader = "X-Symphonix-Signature"

// The bounds of the trigger listener.
const (
	// MaxWebhookBody is the most bytes of a webhook's body; a larger one
	// is answered 413 and starts nothing.
	MaxWebhookBody = 1 << 20
	// MaxWebhooksInFlight is how many webhook requests are handled at
	// once; past it a request is answered 503 and starts nothing.
	MaxWebhooksInFlight = 16
	// SignatureWindow is how far a signature's time may be from the
	// agent's clock, either way; further is stale (a replay) and refused.
	SignatureWindow = 5 * time.Minute
	// WebhookWait is how long a request waits for the run it started to
	// end: within it, 200 or 500 by how the run ended; past it, 202 with
	// the run's id while the run goes on.
	WebhookWait = 30 * time.Second
)

// Sign is the SignatureHeader value for body signed with secret at t: what
// a sender computes.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// checkSignature reports what is wrong with header as body's signature
// with secret at now, or nil. The MAC is compared in constant time.
func checkSignature(secret []byte, header string, body []byte, now time.Time) error {
	if header == "" {
		return errors.New(SignatureHeader + ": missing: this webhook takes signed requests only")
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New(SignatureHeader + `: want "t=<unix seconds>,v1=<hex HMAC-SHA256>"`)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureWindow || d < -SignatureWindow {
		return fmt.Errorf("%s: t is %s from this agent's clock: at most %s either way", SignatureHeader, d.Abs().Truncate(time.Second), SignatureWindow)
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return errors.New(SignatureHeader + ": the signature does not match")
}

// Handler answers the file's webhooks, by method and path: an unknown
// path 404, a known one with another method 405; a body that is not JSON,
// or that lacks what the input mapping reads, 400; one over
// MaxWebhookBody 413; a missing, malformed, stale or wrong
// signature on a signed webhook 401; a paused trigger or agent 503; an
// occurrence skipped by the overlap policy 409 — all of these start
// nothing. Otherwise one run starts: 200 when it finished within
// WebhookWait, 500 when it failed, 202 when it still runs; each with a
// JSON body holding the run's id. The request's headers are never given
// to the mapping.
func (r *Runtime) Handler() http.Handler {
	inFlight := make(chan struct{}, MaxWebhooksInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var match *armed
		methods := []string{}
		for _, a := range r.triggers {
			if a.t.Kind == KindWebhook && a.t.Path == req.URL.Path {
				if a.t.Method == req.Method {
					match = a
				}
				methods = append(methods, a.t.Method)
			}
		}
		switch {
		case match == nil && len(methods) == 0:
			answer(w, http.StatusNotFound, map[string]any{"error": "no webhook on " + req.URL.Path})
			return
		case match == nil:
			w.Header().Set("Allow", strings.Join(methods, ", "))
			answer(w, http.StatusMethodNotAllowed, map[string]any{"error": "method " + req.Method + ": this webhook answers " + strings.Join(methods, ", ")})
			return
		}
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		default:
			w.Header().Set("Retry-After", "1")
			answer(w, http.StatusServiceUnavailable, map[string]any{"error": fmt.Sprintf("the agent handles %d webhooks at once: try again", MaxWebhooksInFlight)})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxWebhookBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				answer(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("body: over %d bytes", MaxWebhookBody)})
				return
			}
			answer(w, http.StatusBadRequest, map[string]any{"error": "body: could not be read"})
			return
		}
		if secret, ok := r.secret[match.t.ID]; ok {
			if err := checkSignature(secret, req.Header.Get(SignatureHeader), body, time.Now()); err != nil {
				answer(w, http.StatusUnauthorized, map[string]any{"error": err.Error()})
				return
			}
		}
		var payload any
		if len(body) > 0 {
			if err := json.Unmarshal(body, &payload); err != nil {
				answer(w, http.StatusBadRequest, map[string]any{"error": "body: not JSON: " + jsonProblem(err)})
				return
			}
		}
		o := OccurrenceOf(match.t)
		o.Method, o.Path, o.Query, o.Body = req.Method, req.URL.Path, QueryOf(req.URL.Query()), payload
		at := time.Now()
		done := make(chan struct{})
		id := flow.NewRunID()
		var runErr error
		// The run is the agent's, not the request's: a client that goes
		// away does not end it.
		ctx := context.WithoutCancel(req.Context())
		go func() {
			defer close(done)
			_, runErr = r.occur(ctx, match.t.ID, o, at, id)
		}()
		t := time.NewTimer(WebhookWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			answer(w, http.StatusAccepted, map[string]any{"run_id": id, "state": "running", "note": "the run goes on; the board shows how it ends"})
			return
		}
		switch {
		case errors.Is(runErr, ErrFilledNothing):
			answer(w, http.StatusBadRequest, map[string]any{"error": r.safe(runErr.Error())})
		case errors.Is(runErr, ErrPaused):
			answer(w, http.StatusServiceUnavailable, map[string]any{"error": "trigger " + match.t.ID + " is " + ErrPaused.Error()})
		case errors.Is(runErr, ErrSkipped):
			answer(w, http.StatusConflict, map[string]any{"error": "trigger " + match.t.ID + ": " + ErrSkipped.Error()})
		case runErr != nil:
			r.log.Warn("trigger: a webhook's run failed", "trigger", match.t.ID, "run", id, "err", r.safe(runErr.Error()))
			answer(w, http.StatusInternalServerError, map[string]any{"run_id": id, "state": "failed", "error": "the run failed: the agent's log and the board say why"})
		default:
			answer(w, http.StatusOK, map[string]any{"run_id": id, "state": "finished"})
		}
	})
}

// jsonProblem says where a body stops being JSON, without echoing it.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("at byte %d", se.Offset)
	}
	return "it cannot be read as JSON"
}

func answer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Listen opens the trigger listener's socket: addr when it is set, else
// the TRIGGER_BIND environment variable's (a host, or host:port), else
// 127.0.0.1 on a free port. A host with no port takes a free one.
func Listen(addr string, getenv func(string) string) (net.Listener, error) {
	if addr == "" && getenv != nil {
		addr = getenv(EnvBind)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(strings.Trim(addr, "[]"), "0")
	}
	return net.Listen("tcp", addr)
}

// Serve answers the webhooks on ln until ctx ends, then stops taking
// requests and waits, up to WebhookWait, for those in flight. The server
// has header and read bounds, so a slow client cannot hold a slot.
func (r *Runtime) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           r.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      WebhookWait + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(r.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("trigger listener: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), WebhookWait)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}
