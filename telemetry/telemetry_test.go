package telemetry_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/symphonix/symphonix/telemetry"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestStartOff(t *testing.T) {
	t.Parallel()
	for name, e := range map[string]map[string]string{
		"no endpoint":   {},
		"disabled":      {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		"exporter none": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := telemetry.Start(t.Context(), env(e), "test")
			if err != nil {
				t.Fatalf("Start = %v", err)
			}
			if tr.Exporting != "" {
				t.Errorf("Start: Exporting = %q, want off", tr.Exporting)
			}
			_, span := tr.Provider.Tracer("t").Start(t.Context(), "x")
			if span.SpanContext().IsValid() {
				t.Errorf("Start: a span with a valid context while tracing is off")
			}
			if err := tr.Shutdown(t.Context()); err != nil {
				t.Errorf("Shutdown = %v", err)
			}
		})
	}
}

func TestStartRefusesBadSettings(t *testing.T) {
	t.Parallel()
	for name, e := range map[string]map[string]string{
		"not a URL":       {"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
		"protocol":        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
		"traces exporter": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "zipkin"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := telemetry.Start(t.Context(), env(e), "test"); err == nil || !strings.Contains(err.Error(), "OTEL_") {
				t.Errorf("Start = %v, want an error naming the variable", err)
			}
		})
	}
}

// TestStartExports: with an endpoint, spans reach an OTLP/HTTP receiver
// at /v1/traces by the time Shutdown returns.
func TestStartExports(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	var path atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		body, _ := io.ReadAll(r.Body)
		if len(body) > 0 {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	tr, err := telemetry.Start(t.Context(), env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}), "test")
	if err != nil {
		t.Fatalf("Start = %v", err)
	}
	if want := srv.URL + "/v1/traces (http/protobuf)"; tr.Exporting != want {
		t.Errorf("Exporting = %q, want %q", tr.Exporting, want)
	}
	_, span := telemetry.Tracer(tr.Provider).Start(t.Context(), "a span")
	span.End()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if posts.Load() == 0 {
		t.Fatalf("the receiver got no spans")
	}
	if p := path.Load(); p != "/v1/traces" {
		t.Errorf("posted to %v, want /v1/traces", p)
	}
}

func TestTraceparent(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sc, err := telemetry.ParseTraceparent(tp)
	if err != nil {
		t.Fatalf("ParseTraceparent(%q) = %v", tp, err)
	}
	if got := sc.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("trace id = %s", got)
	}
	if !sc.IsRemote() || !sc.IsSampled() {
		t.Errorf("ParseTraceparent(%q): remote %v, sampled %v; want both", tp, sc.IsRemote(), sc.IsSampled())
	}
	if got := telemetry.Traceparent(sc); got != tp {
		t.Errorf("Traceparent = %q, want %q", got, tp)
	}
	if got := telemetry.Traceparent(trace.SpanContext{}); got != "" {
		t.Errorf("Traceparent(zero) = %q, want \"\"", got)
	}
	if sc, err := telemetry.ParseTraceparent(""); err != nil || sc.IsValid() {
		t.Errorf(`ParseTraceparent("") = %v, %v; want nothing and no error`, sc, err)
	}
	for _, bad := range []string{
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"hello",
		tp + "-" + strings.Repeat("a", 100),
	} {
		if _, err := telemetry.ParseTraceparent(bad); err == nil {
			t.Errorf("ParseTraceparent(%q) = nil error, want ErrNotTraceparent", bad)
		}
	}
}

func TestUsableRequestID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"":                                 false,
		"abc-123":                          true,
		"0f9e8d7c6b5a49382716051423324150": true,
		strings.Repeat("a", 128):           true,
		strings.Repeat("a", 129):           false,
		"has space":                        false,
		"line\nbreak":                      false,
		"naïve":                            false,
		"tab\t":                            false,
	} {
		if got := telemetry.UsableRequestID(id); got != want {
			t.Errorf("UsableRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestRequestIDs: a usable id is kept, anything else replaced; either is in
// the response header and on the log lines written while serving.
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewJSONHandler(&buf, nil)))
	h := telemetry.RequestIDs(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.InfoContext(r.Context(), "served")
	}))
	for name, c := range map[string]struct {
		sent string
		kept bool
	}{
		"usable":      {"req-42", true},
		"none":        {"", false},
		"too long":    {strings.Repeat("x", telemetry.MaxRequestID+1), false},
		"unprintable": {"a\x01b", false},
	} {
		buf.Reset()
		r := httptest.NewRequest("GET", "/", nil)
		if c.sent != "" {
			r.Header.Set("X-Request-Id", c.sent)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got := w.Header().Get("X-Request-Id")
		switch {
		case c.kept && got != c.sent:
			t.Errorf("%s: X-Request-Id = %q, want %q", name, got, c.sent)
		case !c.kept && (got == c.sent || !telemetry.UsableRequestID(got)):
			t.Errorf("%s: X-Request-Id = %q, want a new one", name, got)
		}
		if !strings.Contains(buf.String(), `"request_id":"`+got+`"`) {
			t.Errorf("%s: the log line %s does not carry request_id %q", name, buf.String(), got)
		}
	}
}

func TestLogHandlerTraceIDs(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	ctx, span := tp.Tracer("t").Start(t.Context(), "x")
	defer span.End()
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "c")
	log.InfoContext(ctx, "in a span")
	sc := span.SpanContext()
	for _, want := range []string{"trace_id=" + sc.TraceID().String(), "span_id=" + sc.SpanID().String(), "component=c"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log line %q lacks %s", buf.String(), want)
		}
	}
	buf.Reset()
	log.InfoContext(t.Context(), "outside")
	if strings.Contains(buf.String(), "trace_id") || strings.Contains(buf.String(), "request_id") {
		t.Errorf("log line outside a span and a request %q carries ids", buf.String())
	}
}
