package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"

	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader is the header a request's id is read from, when the
// client sent a usable one, and always returned in.
const RequestIDHeader = "X-Request-Id"

// MaxRequestID is the longest request id honoured from a client: a longer
// one, an empty one, or one with anything but printable ASCII (no spaces)
// is replaced by one the server makes.
const MaxRequestID = 128

// The keys LogHandler adds to a record.
const (
	KeyRequestID = "request_id"
	KeyTraceID   = "trace_id"
	KeySpanID    = "span_id"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request it serves.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the id of the request ctx serves; "" outside one.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewRequestID returns a new request id: 16 random bytes, 32 lower-case
// hex digits.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b[:])
}

// UsableRequestID reports whether a client's request id is honoured: 1 to
// MaxRequestID bytes of printable ASCII, without spaces.
func UsableRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// RequestIDs gives every request that h serves an id: the client's
// X-Request-Id when it is usable (UsableRequestID), a new one otherwise. The
// id is on the request's context (RequestIDFrom), so on every log line
// LogHandler writes while serving it, and in the response's X-Request-Id
// header.
func RequestIDs(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !UsableRequestID(id) {
			id = NewRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		h.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), id)))
	})
}

// LogHandler returns h adding to every record written with a context what
// the context says of the request it serves: request_id (RequestIDs), and
// trace_id and span_id of the span it is in, when it is in one that is
// traced. Records written without a context (Info rather than InfoContext)
// get nothing. The keys are added at the top level unless a group was
// opened with WithGroup.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(logHandler); ok {
		return h
	}
	return logHandler{h}
}

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if id := RequestIDFrom(ctx); id != "" {
			r.AddAttrs(slog.String(KeyRequestID, id))
		}
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r.AddAttrs(slog.String(KeyTraceID, sc.TraceID().String()), slog.String(KeySpanID, sc.SpanID().String()))
		}
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(attrs)}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.Handler.WithGroup(name)}
}
