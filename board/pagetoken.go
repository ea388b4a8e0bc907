package board

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"connectrpc.com/connect/v2"
)

// A page token is where a List RPC's page stopped, to be handed back for
// the next page: the method it was made for, a hash of the request's
// filters, and the position — the sort key of the last item sent, so that
// the next page starts after it in the list's order however many items
// were added or removed before it (keyset pagination, never an offset).
// It is signed with a key derived from the board's signing key in the
// store: every board on one database accepts the others' tokens, and a
// token from another database, or changed by the client, is refused. It
// is URL-safe base64 and opaque to clients; it does not expire.
//
// The bytes signed: the version, the method as a length and its bytes,
// the first 16 bytes of the SHA-256 of the filters (each as a length and
// its bytes), the count of position keys and each as a length and its
// bytes. The signature, the first 16 bytes of the HMAC-SHA256 of those
// with the key, follows them.

// Limits on a page token.
const (
	pageTokenVersion = 1
	// maxPageToken is the longest page token a request may carry, in
	// bytes; the board's are a few dozen to a few hundred.
	maxPageToken = 2048
	pageTokenMAC = 16
	pageTokenSum = 16
)

// pageTokens makes and opens page tokens with one key.
type pageTokens struct {
	key []byte
}

// make is the token for the page after position, of method's list with
// filters.
func (p pageTokens) make(method string, filters []string, position ...string) string {
	b := []byte{pageTokenVersion}
	b = appendString(b, method)
	sum := filtersSum(filters)
	b = append(b, sum[:pageTokenSum]...)
	b = binary.AppendUvarint(b, uint64(len(position)))
	for _, k := range position {
		b = appendString(b, k)
	}
	b = append(b, p.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open checks token against the method and filters of the request that
// carries it and returns the position it holds. Its error is an
// invalid_argument naming page_token.
func (p pageTokens) open(token, method string, filters []string) ([]string, error) {
	bad := func(why string) ([]string, error) {
		return nil, connect.NewError(connect.CodeInvalidArgument, "page_token: "+why)
	}
	if len(token) > maxPageToken {
		return bad(fmt.Sprintf("%d bytes, at most %d", len(token), maxPageToken))
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+pageTokenMAC {
		return bad("not a page token: pass next_page_token as it came")
	}
	body, mac := b[:len(b)-pageTokenMAC], b[len(b)-pageTokenMAC:]
	if !hmac.Equal(mac, p.mac(body)) {
		return bad("not a page token of this board, or changed: pass next_page_token as it came")
	}
	d := tokenReader{b: body}
	if v := d.byte(); v != pageTokenVersion {
		return bad(fmt.Sprintf("version %d, this board reads %d", v, pageTokenVersion))
	}
	if m := d.string(); m != method {
		return bad(fmt.Sprintf("made for %s, not for this list: ask for the first page again", m))
	}
	sum := filtersSum(filters)
	if got := d.bytes(pageTokenSum); !hmac.Equal(got, sum[:pageTokenSum]) {
		return bad("made for other filters: ask with the filters of the first page, or for the first page again")
	}
	n := d.uvarint()
	if n > 16 {
		d.err = errors.New("too many keys")
	}
	position := make([]string, 0, n)
	for range n {
		position = append(position, d.string())
	}
	if d.err != nil || len(d.b) != 0 {
		return bad("malformed")
	}
	return position, nil
}

func (p pageTokens) mac(b []byte) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write(b)
	return m.Sum(nil)[:pageTokenMAC]
}

// filtersSum is the hash of a request's filters, each told apart from the
// next by its length.
func filtersSum(filters []string) [sha256.Size]byte {
	var b []byte
	for _, f := range filters {
		b = appendString(b, f)
	}
	return sha256.Sum256(b)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// tokenReader reads what make wrote; its first failure sticks in err.
type tokenReader struct {
	b   []byte
	err error
}

func (r *tokenReader) byte() byte {
	if p := r.bytes(1); len(p) == 1 {
		return p[0]
	}
	return 0
}

func (r *tokenReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("short")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *tokenReader) bytes(n uint64) []byte {
	if r.err != nil || uint64(len(r.b)) < n {
		r.err = errors.New("short")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *tokenReader) string() string {
	return string(r.bytes(r.uvarint()))
}
