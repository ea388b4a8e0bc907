package board

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/telemetry"
)

// The attributes of the board's own spans (docs/tracing.md): ids and
// names, never what an approval shows or says.
const (
	attrAgent    = attribute.Key("symphonix.agent")
	attrApproval = attribute.Key("symphonix.approval.id")
	attrRun      = attribute.Key("symphonix.run")
	attrRunID    = attribute.Key("symphonix.run.id")
	attrNode     = attribute.Key("symphonix.node")
	attrState    = attribute.Key("symphonix.approval.state")
	attrSay      = attribute.Key("symphonix.approval.say")
)

// raiseSpan starts the span of a raise the board handles: a child of the
// span the agent raised in when the raise carries its traceparent (linked
// to the link's span, which is another trace), and of the link's span
// otherwise. The approval keeps the span's traceparent (raiseOnce), so its
// decision joins the same trace whenever it comes.
func (b *Board) raiseSpan(ctx context.Context, agentName string, q *boardv1.Raise) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrAgent.String(agentName), attrRun.String(q.GetRun()), attrNode.String(q.GetNode())),
	}
	if q.GetRunId() != "" {
		opts = append(opts, trace.WithAttributes(attrRunID.String(q.GetRunId())))
	}
	if sc, err := telemetry.ParseTraceparent(q.GetTraceparent()); err == nil && sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.LinkFromContext(ctx)))
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return b.tracer.Start(ctx, "approval raise", opts...)
}

// endRaiseSpan ends a raise's span with the approval the board holds for
// it, or its failure.
func endRaiseSpan(span trace.Span, row *ent.Approval, err error) {
	if err != nil {
		span.SetStatus(codes.Error, "raise refused or failed")
	} else {
		span.SetAttributes(attrApproval.String(row.ID), attrState.String(row.State))
	}
	span.End()
}

// decisionSpan starts the span of a decision on row (name: "approval
// decide", "approval cancel", "approval expire"): a child of the raise's
// trace context when the approval kept one, linked to the span of the RPC
// that decided (ctx's); a child of ctx's span otherwise. Its traceparent
// goes to the agent with the decision, whose resumed run continues it.
func (b *Board) decisionSpan(ctx context.Context, row *ent.Approval, name string) trace.Span {
	opts := []trace.SpanStartOption{
		trace.WithAttributes(attrAgent.String(row.Agent), attrApproval.String(row.ID), attrRun.String(row.Run), attrNode.String(row.Node)),
	}
	parent := ctx
	if sc, err := telemetry.ParseTraceparent(row.Traceparent); err == nil && sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.LinkFromContext(ctx)))
		parent = trace.ContextWithRemoteSpanContext(context.Background(), sc)
	}
	_, span := b.tracer.Start(parent, name, opts...)
	return span
}

// endDecisionSpan ends a decision's span with what became of it: the say
// when it decided, or that it failed (the refusal's words stay out of it).
func endDecisionSpan(span trace.Span, say string, err error) {
	switch {
	case err != nil:
		span.SetStatus(codes.Error, "not decided")
	case say != "":
		span.SetAttributes(attrSay.String(say))
	}
	span.End()
}

// traceparentOf is the traceparent of span, or "" when it has none.
func traceparentOf(span trace.Span) string {
	return telemetry.Traceparent(span.SpanContext())
}
