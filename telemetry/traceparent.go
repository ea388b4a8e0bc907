package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// MaxTraceparent is the length of a version 00 traceparent: a longer value
// is never one this module reads.
const MaxTraceparent = len("00-") + 32 + len("-") + 16 + len("-") + 2

// Traceparent is sc as a W3C traceparent header value, or "" when sc is
// not valid (no trace).
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c.Get("traceparent")
}

// ParseTraceparent reads a W3C traceparent into a remote span context. ""
// is the zero SpanContext and no error; anything else that is not a
// traceparent is ErrNotTraceparent.
func ParseTraceparent(s string) (trace.SpanContext, error) {
	if s == "" {
		return trace.SpanContext{}, nil
	}
	if len(s) > MaxTraceparent {
		return trace.SpanContext{}, ErrNotTraceparent
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": s})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return trace.SpanContext{}, ErrNotTraceparent
	}
	return sc, nil
}
