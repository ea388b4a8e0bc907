package telemetry

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"connectrpc.com/connect/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The RPC attributes of the OpenTelemetry semantic conventions, as the
// RPC instrumentations in use read them (rpc.system, rpc.service,
// rpc.method, and the status per system).
const (
	keyRPCSystem       = attribute.Key("rpc.system")
	keyRPCService      = attribute.Key("rpc.service")
	keyRPCMethod       = attribute.Key("rpc.method")
	keyGRPCStatusCode  = attribute.Key("rpc.grpc.status_code")
	keyConnectCode     = attribute.Key("rpc.connect_rpc.error_code")
	keyNetworkProtocol = attribute.Key("network.protocol.name")
)

// ServerInterceptor gives every RPC a server sends a span: named for its
// procedure ("symphonix.board.v1.ApprovalService/Decide"), of kind server,
// a child of the caller's span when the request carries a W3C traceparent
// header, with rpc.system (connect_rpc or grpc, gRPC-Web being grpc),
// rpc.service and rpc.method, and the outcome: rpc.grpc.status_code, or
// rpc.connect_rpc.error_code for a Connect call that failed. The span is
// an error for the codes a server is at fault for (unknown, deadline
// exceeded, unimplemented, internal, unavailable, data loss); its status
// says the code and never the error's message. A nil or no-op tp is off:
// the interceptor then does nothing at all, not even read the header.
func ServerInterceptor(tp trace.TracerProvider) connect.ServerInterceptor {
	if Off(tp) {
		return func(next connect.ServerFunc) connect.ServerFunc { return next }
	}
	tracer := Tracer(tp)
	prop := propagation.TraceContext{}
	return func(next connect.ServerFunc) connect.ServerFunc {
		return func(ctx context.Context, spec connect.Spec, stream connect.ServerStream) error {
			protocol := ""
			if info, ok := connect.CallInfoForServerContext(ctx); ok {
				protocol = info.Protocol
				ctx = prop.Extract(ctx, headerCarrier{info.RequestHeader()})
			}
			ctx, span := tracer.Start(ctx, spanName(spec.Procedure),
				trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(rpcAttributes(spec.Procedure, protocol)...))
			err := next(ctx, spec, stream)
			endRPC(span, protocol, err, true)
			return err
		}
	}
}

// ClientInterceptor gives every RPC a client makes a span: as
// ServerInterceptor's, of kind client, its traceparent sent in the
// request's header so the server's span is its child. A call that fails
// is an error whatever its code. The span ends when the stream does: its
// last Receive, or Close. A nil or no-op tp is off, and does nothing.
func ClientInterceptor(tp trace.TracerProvider) connect.ClientInterceptor {
	if Off(tp) {
		return func(next connect.ClientFunc) connect.ClientFunc { return next }
	}
	tracer := Tracer(tp)
	prop := propagation.TraceContext{}
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			ctx, span := tracer.Start(ctx, spanName(spec.Procedure),
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(rpcAttributes(spec.Procedure, "")...))
			info, ok := connect.CallInfoForClientContext(ctx)
			if ok && span.SpanContext().IsValid() {
				prop.Inject(ctx, headerCarrier{info.RequestHeader()})
			}
			s, err := next(ctx, spec)
			if err != nil {
				endRPC(span, protocolOf(info), err, false)
				return nil, err
			}
			return &clientStream{ClientStream: s, span: span, info: info}, nil
		}
	}
}

// clientStream ends its span once, when the stream ends.
type clientStream struct {
	connect.ClientStream
	span trace.Span
	info *connect.CallInfo
	once sync.Once
}

func (s *clientStream) Receive(msg any) error {
	err := s.ClientStream.Receive(msg)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		s.end(nil)
	default:
		s.end(err)
	}
	return err
}

func (s *clientStream) Close() error {
	err := s.ClientStream.Close()
	s.end(nil)
	return err
}

func (s *clientStream) end(err error) {
	s.once.Do(func() {
		s.span.SetAttributes(keyRPCSystem.String(system(protocolOf(s.info))))
		endRPC(s.span, protocolOf(s.info), err, false)
	})
}

func protocolOf(info *connect.CallInfo) string {
	if info == nil {
		return ""
	}
	return info.Protocol
}

// spanName is the conventions' span name: the procedure without its
// leading slash.
func spanName(procedure string) string { return strings.TrimPrefix(procedure, "/") }

func rpcAttributes(procedure, protocol string) []attribute.KeyValue {
	service, method, _ := strings.Cut(spanName(procedure), "/")
	attrs := []attribute.KeyValue{keyRPCService.String(service), keyRPCMethod.String(method)}
	if protocol != "" {
		attrs = append(attrs, keyRPCSystem.String(system(protocol)), keyNetworkProtocol.String(protocol))
	}
	return attrs
}

// system is rpc.system for connect's protocol name: gRPC and gRPC-Web are
// grpc, the Connect protocol connect_rpc.
func system(protocol string) string {
	switch protocol {
	case "grpc", "grpcweb":
		return "grpc"
	case "connect":
		return "connect_rpc"
	}
	return "connect_rpc"
}

// endRPC records the outcome of a call on its span and ends it.
func endRPC(span trace.Span, protocol string, err error, server bool) {
	code := connect.Code(0)
	if err != nil {
		code = connect.CodeOf(err)
	}
	if system(protocol) == "grpc" {
		span.SetAttributes(keyGRPCStatusCode.Int(int(code)))
	} else if err != nil {
		span.SetAttributes(keyConnectCode.String(code.String()))
	}
	if err != nil && (!server || serverFault(code)) {
		span.SetStatus(codes.Error, code.String())
	}
	span.End()
}

// serverFault: the codes the conventions count as a server's error.
func serverFault(c connect.Code) bool {
	switch c {
	case connect.CodeUnknown, connect.CodeDeadlineExceeded, connect.CodeUnimplemented,
		connect.CodeInternal, connect.CodeUnavailable, connect.CodeDataLoss:
		return true
	}
	return false
}

// headerCarrier is a connect header as a propagation carrier.
type headerCarrier struct{ h *connect.Header }

func (c headerCarrier) Get(key string) string { return c.h.Get(key) }
func (c headerCarrier) Set(key, value string) { c.h.Set(key, value) }
func (c headerCarrier) Keys() []string {
	var keys []string
	for k := range c.h.All() {
		keys = append(keys, k)
	}
	return keys
}
