package cli

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/symphonix/symphonix/telemetry"
)

// flushWithin bounds how long a command on its way out waits for the
// collector to take the spans not yet sent.
const flushWithin = 5 * time.Second

// Traces is the tracer provider the environment asks for (telemetry.Start;
// docs/tracing.md), nil when tracing is off, and the function that sends
// what is left and stops it, to defer. The collector it exports to is
// logged at info. A bad OTEL_ variable is a usage error naming it.
func Traces(ctx context.Context, getenv func(string) string, service string, log *slog.Logger) (trace.TracerProvider, func(), error) {
	t, err := telemetry.Start(ctx, getenv, service)
	if err != nil {
		return nil, nil, &UsageError{Err: err}
	}
	if t.Exporting == "" {
		return nil, func() {}, nil
	}
	log.InfoContext(ctx, "tracing", "exporting_to", t.Exporting)
	return t.Provider, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushWithin)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			log.WarnContext(ctx, "tracing: spans not sent on the way out", "err", err)
		}
	}, nil
}
