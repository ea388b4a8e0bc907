package node

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/symphonix/symphonix/flow"
)

// tracerName is the instrumentation name of the spans below a run's.
const tracerName = "github.com/symphonix/symphonix/node"

// The attributes of the spans of runs, nodes and calls (docs/tracing.md):
// names, ids, kinds, outcomes and token counts; never a prompt, a reply,
// a tool's arguments or its result. The model and tool call attributes are
// the OpenTelemetry conventions for generative AI.
const (
	attrRunID        = attribute.Key("symphonix.run.id")
	attrRunOutcome   = attribute.Key("symphonix.run.outcome")
	attrRunSteps     = attribute.Key("symphonix.run.steps")
	attrNode         = attribute.Key("symphonix.node")
	attrNodeKind     = attribute.Key("symphonix.node.kind")
	attrNodeCopy     = attribute.Key("symphonix.node.copy")
	attrNodeOutcome  = attribute.Key("symphonix.node.outcome")
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	attrToolName     = attribute.Key("gen_ai.tool.name")
)

// tracing makes the spans below a run's own (which governed starts, and
// the engine's context carries): one for each node a run enters, told by
// the engine's Watcher, and one for each model call and tool call, made
// through the wrapped model and tool caller, each the child of the node
// that made it when that node is the only one of its run running, of the
// run otherwise. A nil *tracing makes none.
type tracing struct {
	tracer trace.Tracer

	mu    sync.Mutex
	nodes map[string]map[nodeKey]trace.Span // by run: its nodes' open spans
}

type nodeKey struct {
	node string
	copy int
}

// newTracing returns the spans' maker for tp; nil (none) when tp is nil.
func newTracing(tp trace.TracerProvider) *tracing {
	if tp == nil {
		return nil
	}
	return &tracing{tracer: tp.Tracer(tracerName), nodes: map[string]map[nodeKey]trace.Span{}}
}

// watch is the engine's Watcher for node spans; nil when t is nil.
func (t *tracing) watch() flow.Watcher {
	if t == nil {
		return nil
	}
	return t.event
}

func (t *tracing) event(ctx context.Context, e flow.Event) {
	run := trace.SpanFromContext(ctx)
	switch e.Kind {
	case flow.EventRunStarted, flow.EventRunResumed:
		run.SetAttributes(attrRunID.String(e.Run))
	case flow.EventNodeEntered:
		_, span := t.tracer.Start(ctx, "node "+e.Node, trace.WithTimestamp(e.At), trace.WithAttributes(
			attrRunID.String(e.Run), attrNode.String(e.Node), attrNodeKind.String(string(e.NodeKind)), attrNodeCopy.Int(e.Copy)))
		t.mu.Lock()
		if t.nodes[e.Run] == nil {
			t.nodes[e.Run] = map[nodeKey]trace.Span{}
		}
		t.nodes[e.Run][nodeKey{e.Node, e.Copy}] = span
		t.mu.Unlock()
	case flow.EventNodeFinished:
		t.mu.Lock()
		span := t.nodes[e.Run][nodeKey{e.Node, e.Copy}]
		delete(t.nodes[e.Run], nodeKey{e.Node, e.Copy})
		if len(t.nodes[e.Run]) == 0 {
			delete(t.nodes, e.Run)
		}
		t.mu.Unlock()
		if span == nil {
			return
		}
		span.SetAttributes(attrNodeOutcome.String(e.Outcome))
		if e.Outcome == flow.OutcomeFailed {
			span.SetStatus(codes.Error, "the node failed")
		}
		span.End()
	case flow.EventRunPaused, flow.EventRunFinished, flow.EventRunFailed, flow.EventRunStopped:
		run.SetAttributes(attrRunID.String(e.Run), attrRunOutcome.String(e.Kind.String()), attrRunSteps.Int(e.Steps))
		if e.Kind == flow.EventRunFailed {
			run.SetStatus(codes.Error, "the run failed")
		}
	}
}

// parent is the context a call made on ctx is a span of: that of the
// node named (or, for "", the one node) running in ctx's run, when there
// is exactly one; ctx otherwise.
func (t *tracing) parent(ctx context.Context, node string) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	var found trace.Span
	for k, s := range t.nodes[flow.RunOf(ctx)] {
		if node != "" && k.node != node {
			continue
		}
		if found != nil {
			return ctx
		}
		found = s
	}
	if found == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, found)
}

// wrapModel gives each call of m a span "chat": its node, and the tokens
// the model reports. m itself when t is nil.
func (t *tracing) wrapModel(m flow.Model) flow.Model {
	if t == nil || m == nil {
		return m
	}
	return tracedModel{t: t, m: m}
}

type tracedModel struct {
	t *tracing
	m flow.Model
}

func (tm tracedModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	_, span := tm.t.tracer.Start(tm.t.parent(ctx, req.Node), "chat", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrOperation.String("chat"), attrNode.String(req.Node), attrRunID.String(flow.RunOf(ctx))))
	defer span.End()
	reply, err := tm.m.Complete(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, "the model call failed")
	}
	if u := reply.Usage; u != nil {
		span.SetAttributes(attrInputTokens.Int(u.InputTokens), attrOutputTokens.Int(u.OutputTokens))
	}
	return reply, err
}

// wrapTools gives each tool call a span "execute_tool NAME". call itself
// when t is nil.
func (t *tracing) wrapTools(call flow.ToolCaller) flow.ToolCaller {
	if t == nil || call == nil {
		return call
	}
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		_, span := t.tracer.Start(t.parent(ctx, ""), "execute_tool "+name,
			trace.WithAttributes(attrOperation.String("execute_tool"), attrToolName.String(name), attrRunID.String(flow.RunOf(ctx))))
		defer span.End()
		res, err := call(ctx, name, args)
		if err != nil {
			span.SetStatus(codes.Error, "the tool call failed")
		}
		return res, err
	}
}

// watchers returns a Watcher telling each of ws that is not nil, in order;
// nil when none is.
func watchers(ws ...flow.Watcher) flow.Watcher {
	var set []flow.Watcher
	for _, w := range ws {
		if w != nil {
			set = append(set, w)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return func(ctx context.Context, e flow.Event) {
		for _, w := range set {
			w(ctx, e)
		}
	}
}
