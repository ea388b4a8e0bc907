package governed

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
)

// tracerName is the instrumentation name of the spans of runs.
const tracerName = "github.com/symphonix/symphonix/governed"

// The attributes of a run's span (docs/tracing.md). The engine's watcher
// adds the run's id and how it came out (node.traceWatch).
const (
	attrThread   = attribute.Key("symphonix.thread")
	attrApproval = attribute.Key("symphonix.approval.id")
	attrSay      = attribute.Key("symphonix.approval.say")
	attrWaits    = attribute.Key("symphonix.run.waits_for")
)

// runSpan starts the span of one call of the engine on thread: a run
// started ("run") or resumed ("run resume").
func (a *Approvals) runSpan(ctx context.Context, name, thread string) (context.Context, trace.Span) {
	return a.tracer.Start(ctx, name, trace.WithAttributes(attrThread.String(thread)))
}

// decisionSpan starts the span of acting on the board's decision d: a
// child of the board's span for it when the decision carried one, so the
// resumed run continues the trace its approval was raised in.
func (a *Approvals) decisionSpan(ctx context.Context, d agentlink.Decision, thread string) (context.Context, trace.Span) {
	if d.Trace.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, d.Trace)
	}
	return a.tracer.Start(ctx, "run resume", trace.WithAttributes(
		attrThread.String(thread), attrApproval.String(d.ApprovalID), attrSay.String(d.Say)))
}

// endRunSpan ends a run's span with whom it waits for, or why it failed.
// A run ended by the board (cancelled, expired) is not an error.
func endRunSpan(span trace.Span, res flow.Result, v Verdict, err error) {
	switch {
	case err != nil && !errors.Is(err, ErrCancelled) && !errors.Is(err, ErrExpired):
		span.SetStatus(codes.Error, "the run failed")
	case res.Pending != nil && v.Who != "":
		span.SetAttributes(attrWaits.String(v.Who))
		if v.Approval != "" {
			span.SetAttributes(attrApproval.String(v.Approval))
		}
	}
	span.End()
}
