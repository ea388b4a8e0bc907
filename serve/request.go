package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// MaxRequestBytes is the largest request body the API reads.
const MaxRequestBytes = 1 << 20

// MaxThreadChars is the longest thread name.
const MaxThreadChars = 128

// requestError is a request refused for something the caller sent: the
// field (or header) it was wrong about, and what was wrong with it.
type requestError struct {
	status int
	field  string
	msg    string
}

func (e *requestError) Error() string { return e.field + ": " + e.msg }

func badRequest(field, format string, args ...any) error {
	return &requestError{status: http.StatusBadRequest, field: field, msg: fmt.Sprintf(format, args...)}
}

// validThread checks a thread name: 1 to MaxThreadChars characters of
// A-Z a-z 0-9 . _ -, and not "." or "..", which no URL path can carry.
func validThread(t string) error {
	switch {
	case t == "":
		return badRequest("thread", "empty: want 1 to %d characters of A-Z a-z 0-9 . _ -", MaxThreadChars)
	case len(t) > MaxThreadChars:
		return badRequest("thread", "%d characters long: at most %d", len(t), MaxThreadChars)
	case t == "." || t == "..":
		return badRequest("thread", "%q is not a thread name", t)
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return badRequest("thread", "character %d is %q: want only A-Z a-z 0-9 . _ -", i+1, rune(t[i]))
		}
	}
	return nil
}

// threadOf is the request's {thread}, checked.
func threadOf(r *http.Request) (string, error) {
	t := r.PathValue("thread")
	return t, validThread(t)
}

// readObject reads the request's body as one JSON object of at most
// MaxRequestBytes, sent as application/json, and refuses keys other than
// allowed.
func readObject(w http.ResponseWriter, r *http.Request, allowed ...string) (map[string]json.RawMessage, error) {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return nil, &requestError{status: http.StatusUnsupportedMediaType, field: "Content-Type",
			msg: fmt.Sprintf("%q: want application/json", ct)}
	}
	body := http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	dec := json.NewDecoder(body)
	var m map[string]json.RawMessage
	err := dec.Decode(&m)
	if err == nil {
		// One value and nothing after it.
		if _, terr := dec.Token(); terr != io.EOF {
			err = terr
			if err == nil {
				err = errors.New("more than one JSON value")
			}
		}
	}
	var (
		tooBig *http.MaxBytesError
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case err == nil && m == nil:
		return nil, badRequest("body", "null: want a JSON object")
	case err == nil:
	case errors.As(err, &tooBig):
		return nil, &requestError{status: http.StatusRequestEntityTooLarge, field: "body",
			msg: fmt.Sprintf("more than %d bytes", MaxRequestBytes)}
	case errors.Is(err, io.EOF):
		return nil, badRequest("body", "empty: want a JSON object")
	case errors.As(err, &syntax):
		return nil, badRequest("body", "not JSON: %v (at byte %d)", err, syntax.Offset)
	case errors.As(err, &typ):
		return nil, badRequest("body", "a JSON %s: want a JSON object", typ.Value)
	default:
		return nil, badRequest("body", "not one JSON object: %v", err)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			return nil, badRequest(k, "unknown field: want %s", strings.Join(allowed, " or "))
		}
	}
	return m, nil
}
