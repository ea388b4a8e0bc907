// Package wholemsg has an HTTP client send each message of a connect or
// gRPC stream as one piece.
//
// connect-go writes a stream's message to the request body in two writes,
// its 5-byte prefix and then the message, and Go's HTTP/2 transport sends
// each read of the body as a DATA frame of its own and flushes it: two
// frames and two system calls a message, and at the server two frames to
// read and hand to the handler. A link sends small messages all the time,
// so that is twice the work on both ends for nothing. Transport reads such
// a body a message at a time instead, so that each crosses as one frame.
package wholemsg

import (
	"encoding/binary"
	"io"
	"net/http"
	"strings"
)

// prefixLen is an enveloped message's prefix: a byte of flags and the
// message's length, big-endian.
const prefixLen = 5

// Transport returns rt reading the body of every enveloped stream it
// sends a message at a time. A request whose content type is not an
// enveloped one (a unary connect call, a plain HTTP request) goes as it is.
func Transport(rt http.RoundTripper) http.RoundTripper {
	return transport{rt}
}

type transport struct{ next http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || !enveloped(req.Header.Get("Content-Type")) {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context()) // a RoundTripper must not change the request
	r.Body = &body{rc: req.Body}
	return t.next.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport underneath.
func (t transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// enveloped reports whether a request of this content type carries
// enveloped messages: a connect stream's or any gRPC call's.
func enveloped(contentType string) bool {
	return strings.HasPrefix(contentType, "application/connect+") ||
		contentType == "application/grpc" || strings.HasPrefix(contentType, "application/grpc+") ||
		strings.HasPrefix(contentType, "application/grpc-web")
}

// body reads enveloped messages from rc and gives each Read as much of one
// message as fits, its prefix with it: the writer writes a message's prefix
// and its bytes one right after the other, so waiting for the rest of a
// message once its prefix is in never waits on the caller.
type body struct {
	rc     io.ReadCloser
	prefix [prefixLen]byte
	read   int    // bytes of the prefix read from rc
	given  int    // bytes of the prefix given to the caller
	left   uint32 // bytes of the message after its prefix still to read
}

func (b *body) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.given == prefixLen && b.left == 0 { // the last message is out
		b.read, b.given = 0, 0
	}
	for b.read < prefixLen {
		m, err := b.rc.Read(b.prefix[b.read:])
		b.read += m
		if err != nil && b.read < prefixLen {
			if err == io.EOF && b.read > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if b.read == prefixLen {
			b.left = binary.BigEndian.Uint32(b.prefix[1:])
		}
	}
	n := copy(p, b.prefix[b.given:])
	b.given += n
	if n == len(p) || b.left == 0 {
		return n, nil
	}
	m, err := io.ReadFull(b.rc, p[n:n+int(min(uint64(len(p)-n), uint64(b.left)))])
	b.left -= uint32(m)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the prefix said there was more
	}
	return n + m, err
}

func (b *body) Close() error { return b.rc.Close() }
