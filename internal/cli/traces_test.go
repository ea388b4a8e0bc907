package cli

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestTracesBadVariable: a bad OTEL_ variable is a usage error (exit 2)
// naming it; no endpoint is tracing off, with nothing to stop.
func TestTracesBadVariable(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "udp"}
	_, _, err := Traces(t.Context(), func(k string) string { return env[k] }, "test", log)
	var usage *UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Errorf("Traces with a bad protocol = %v, want a usage error naming OTEL_EXPORTER_OTLP_PROTOCOL", err)
	}
	tp, stop, err := Traces(t.Context(), func(string) string { return "" }, "test", log)
	if err != nil || tp != nil || stop == nil {
		t.Fatalf("Traces with no endpoint = %v, %v; want nil (off) and a stop", tp, err)
	}
	stop()
}
