package agentlink

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"connectrpc.com/connect/v2"
)

// Why a link gives up: each is an answer that dialling again would meet
// again until a person changes something. A *GaveUpError wraps one of them.
var (
	// ErrTokenRefused: the board refused the agent's token — malformed,
	// revoked, expired, an operator's, or minted for another agent's name
	// (unauthenticated or permission_denied).
	ErrTokenRefused = errors.New("the board refused the agent's token")
	// ErrNotABoard: the link URL answered 404 or 405: something listens
	// there, and it is not a board.
	ErrNotABoard = errors.New("the monitor URL does not answer as a board")
	// ErrUntrustedCertificate: the board's TLS certificate is signed by no
	// certificate authority the agent trusts, or is not for the URL's host.
	ErrUntrustedCertificate = errors.New("the board's TLS certificate is not trusted")
)

// GaveUpError is what Run returns when it stops dialling because the
// link cannot come up by waiting.
type GaveUpError struct {
	// Board: the board's URL, without credentials.
	Board string
	// Reason: ErrTokenRefused, ErrNotABoard or ErrUntrustedCertificate.
	Reason error
	// Err: what the dial met.
	Err error
	// Fix: what to do about it, in a sentence.
	Fix string
}

// Error says in one line what is wrong and what to do.
func (e *GaveUpError) Error() string {
	return oneLine(fmt.Sprintf("link to %s: %v (%v); %s", e.Board, e.Reason, e.Err, e.Fix))
}

// Unwrap lets errors.Is find both the reason and what the dial met.
func (e *GaveUpError) Unwrap() []error { return []error{e.Reason, e.Err} }

// oneLine makes s a single line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// giveUp returns the *GaveUpError for err when dialling again cannot help,
// or nil when it can: a refused connection, a timeout, a 5xx, a board
// restarting or unavailable, and the refusals an upgrade of the board can
// lift (failed_precondition, invalid_argument) are retried.
func (l *Link) giveUp(err error) *GaveUpError {
	if err == nil {
		return nil
	}
	gave := func(reason error, cause error, fix string) *GaveUpError {
		return &GaveUpError{Board: l.board().Redacted(), Reason: reason, Err: cause, Fix: fix}
	}
	var status *httpStatusError
	if errors.As(err, &status) {
		return gave(ErrNotABoard, status, "check --monitor (MONITOR_URL): it is the address the board prints when it starts, "+
			"like http://HOST:7777, with no path")
	}
	var unknownCA x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknownCA):
		return gave(ErrUntrustedCertificate, unknownCA, "give the agent the certificate of the authority that signed the board's "+
			"(SSL_CERT_FILE=PEM), or serve the board with a certificate an authority the agent trusts has signed")
	case errors.As(err, &host):
		return gave(ErrUntrustedCertificate, host, "use the host name the board's certificate is for in --monitor (MONITOR_URL), "+
			"or serve the board with a certificate for this one")
	}
	var ce *connect.Error
	if errors.As(err, &ce) && ce.IsRemote() {
		switch ce.Code() {
		case connect.CodeUnauthenticated, connect.CodePermissionDenied:
			name := l.cfg.Identity.Name
			return gave(ErrTokenRefused, err, fmt.Sprintf("mint a token for this agent on the board (board token agent --name %s) "+
				"and start the agent with it (--token or MONITOR_TOKEN)", name))
		}
	}
	return nil
}

// httpStatusError is a link call the server answered with an HTTP status
// no board gives the link.
type httpStatusError struct {
	status int
	err    error
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

func (e *httpStatusError) Unwrap() error { return e.err }

// statusRecorder remembers the HTTP status of the link call's response.
type statusRecorder struct {
	next   http.RoundTripper
	status atomic.Int32
}

func (s *statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(r)
	if err == nil {
		s.status.Store(int32(res.StatusCode))
	}
	return res, err
}

// notABoard wraps err in an *httpStatusError when the server answered the
// link call with 404 or 405: a board serves the link's path, and answers
// a stream with 200 and its status in the stream, so either means
// the URL is not a board's (a proxy path, a web server, another service).
func (s *statusRecorder) notABoard(err error) error {
	if err == nil {
		return nil
	}
	switch code := int(s.status.Load()); code {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return &httpStatusError{status: code, err: err}
	}
	return err
}
