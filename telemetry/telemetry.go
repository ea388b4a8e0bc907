// Package telemetry is what the board and the agent tell an operator about
// themselves beyond their answers: OpenTelemetry traces, exported by OTLP
// when the environment names a collector and off (a no-op tracer provider,
// costing nothing) otherwise; the connect interceptor that gives every RPC a
// span by the OpenTelemetry conventions for RPC, client and server side;
// W3C traceparent values for trace context carried in messages; request
// ids; and the slog handler that puts request ids, trace ids and span ids
// on every log line written while serving a request. The design is
// docs/tracing.md and docs/logs.md.
//
// Spans carry names, ids, durations, token counts and outcomes: never a
// payload, never a secret.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentation is the name of the tracers this module makes.
const instrumentation = "github.com/symphonix/symphonix"

// Tracer is the tracer of tp for this module's spans; a nil tp is the
// no-op provider.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(instrumentation)
}

// Off reports whether tp traces nothing: nil, or the no-op provider.
func Off(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return true
	}
	return false
}

// Traces is the tracer provider a binary uses, and how to stop it.
type Traces struct {
	// Provider: a no-op provider when tracing is off.
	Provider trace.TracerProvider
	// Exporting says where spans go ("http://collector:4318/v1/traces
	// (http/protobuf)"), or "" when tracing is off.
	Exporting string
	shutdown  func(context.Context) error
}

// Shutdown sends the spans not yet exported and stops the exporter; ctx
// bounds how long it waits for the collector. A no-op when tracing is off.
func (t *Traces) Shutdown(ctx context.Context) error {
	if t == nil || t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// The environment variables Start reads itself, by the OpenTelemetry
// specification's names. The exporter reads the rest of its own
// (OTEL_EXPORTER_OTLP_HEADERS, …_TIMEOUT, …_CERTIFICATE, …_COMPRESSION),
// and the SDK OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG and
// OTEL_RESOURCE_ATTRIBUTES, from the process's environment.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envServiceName    = "OTEL_SERVICE_NAME"
	envSDKDisabled    = "OTEL_SDK_DISABLED"
	envTracesExporter = "OTEL_TRACES_EXPORTER"
)

// Start returns the tracer provider the environment asks for (getenv; nil
// is an empty environment). Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise: spans
// are batched and exported by OTLP over HTTP (protobuf), or over gRPC when
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL is grpc. service names the process
// unless OTEL_SERVICE_NAME does. Start dials nothing: a collector that is
// down costs the spans it misses, never a start. Call Shutdown on the way
// out, to send what is left.
func Start(ctx context.Context, getenv func(string) string, service string) (*Traces, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	off := &Traces{Provider: noop.NewTracerProvider()}
	if strings.EqualFold(strings.TrimSpace(getenv(envSDKDisabled)), "true") {
		return off, nil
	}
	switch e := strings.TrimSpace(getenv(envTracesExporter)); e {
	case "", "otlp":
	case "none":
		return off, nil
	default:
		return nil, fmt.Errorf("%s=%q: want otlp or none", envTracesExporter, e)
	}
	url, err := endpointURL(getenv)
	if err != nil || url == "" {
		return off, err
	}
	protocol, protocolVar := getenv(envTracesProtocol), envTracesProtocol
	if protocol == "" {
		protocol, protocolVar = getenv(envProtocol), envProtocol
	}
	var exp sdktrace.SpanExporter
	switch protocol {
	case "", "http/protobuf":
		protocol = "http/protobuf"
		if getenv(envTracesEndpoint) == "" {
			url = strings.TrimSuffix(url, "/") + "/v1/traces"
		}
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
	case "grpc":
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(url))
	default:
		return nil, fmt.Errorf("%s=%q: want http/protobuf or grpc", protocolVar, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter for %s: %w", url, err)
	}
	if n := getenv(envServiceName); n != "" {
		service = n
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service)))
	if err != nil {
		// Only schema URLs that disagree: keep ours.
		res = resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(MaxQueuedSpans)),
		sdktrace.WithResource(res),
	)
	return &Traces{Provider: tp, Exporting: url + " (" + protocol + ")", shutdown: tp.Shutdown}, nil
}

// MaxQueuedSpans is how many ended spans wait for the exporter at most; a
// span ended while the queue is full is dropped, so a collector that is
// down or slow never grows the process.
const MaxQueuedSpans = 2048

// endpointURL is the collector's URL: the traces endpoint as it is given,
// or the general endpoint (to which an HTTP exporter adds /v1/traces).
func endpointURL(getenv func(string) string) (string, error) {
	name, v := envTracesEndpoint, strings.TrimSpace(getenv(envTracesEndpoint))
	if v == "" {
		name, v = envEndpoint, strings.TrimSpace(getenv(envEndpoint))
	}
	if v == "" {
		return "", nil
	}
	if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		return "", fmt.Errorf("%s=%q: want a URL, http://HOST:PORT or https://HOST:PORT", name, v)
	}
	return v, nil
}

// ErrNotTraceparent is a traceparent value that is not one.
var ErrNotTraceparent = errors.New("not a W3C traceparent")
