package board

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// minBodyRate is the slowest a request body may arrive, on average, once
// its grace (Config.BodyGrace) has passed: a body must have sent
// (elapsed − grace) × minBodyRate bytes at any moment, or it is cut off.
const minBodyRate = 8 << 10 // bytes a second

// slowBodyError is what reading a body that fell behind gives.
type slowBodyError struct {
	read        int64
	took, grace time.Duration
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("request body too slow: %d bytes in %s, want %d bytes a second after the first %s", e.read, e.took.Round(time.Millisecond), minBodyRate, e.grace)
}

// bodyDeadlines cuts off the body of every request but the streams that
// may stay open (openEnded) when it falls behind: the read deadline starts at the grace and moves
// on by a second for every minBodyRate bytes read. Without it, a client
// sending a byte now and then holds a connection, a handler and its
// buffers for as long as it likes; there is no server-wide read deadline
// because links and watches live for hours (docs/decisions.md). The
// deadline goes once the body has been read to its end.
func (b *Board) bodyDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || openEnded(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		start := time.Now()
		if err := rc.SetReadDeadline(start.Add(b.cfg.BodyGrace)); err != nil {
			next.ServeHTTP(w, r) // a writer without deadlines: only in tests
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, start: start, grace: b.cfg.BodyGrace}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody is a request body whose read deadline moves on with what
// it has read.
type deadlineBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	read  int64
	ended bool
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	d.read += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		if !d.ended {
			d.ended = true
			_ = d.rc.SetReadDeadline(time.Time{})
		}
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &slowBodyError{read: d.read, took: time.Since(d.start), grace: d.grace}
	case n > 0:
		earned := time.Duration(float64(d.read) / minBodyRate * float64(time.Second))
		_ = d.rc.SetReadDeadline(d.start.Add(d.grace + earned))
	}
	return n, err
}
