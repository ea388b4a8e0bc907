package board

import (
	"context"

	"connectrpc.com/connect/v2"
	healthv1 "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// grpc.health.v1.Health, served by the same connect server as the board's
// own services, with the messages grpc-go generates for it, so that load
// balancers, grpc-health-probe and grpc-go's health client work unchanged.
// Check needs no credential, as /readyz needs none (probes.go), and says
// no more than it does. Watch needs a token (any valid operator or agent
// token; see policy) and is held to it while it stays open (streams.go):
// a stream that stays open holds a place on the board, which nobody
// unknown may take.
//
// The board, and every service it serves, is SERVING while it is ready
// (probes.go: its store answers and it is not shutting down) and
// NOT_SERVING otherwise. List is not served (unimplemented).

// servedServices are the services Check and Watch know, by full name; ""
// is the board as a whole. TestServedServices holds it to the services
// the board registers.
var servedServices = map[string]bool{
	"":                                         true,
	boardv1connect.AgentLinkServiceName:        true,
	boardv1connect.AgentServiceName:            true,
	boardv1connect.AlertServiceName:            true,
	boardv1connect.ApprovalServiceName:         true,
	boardv1connect.AuditServiceName:            true,
	boardv1connect.ChatServiceName:             true,
	boardv1connect.ConversationServiceName:     true,
	boardv1connect.EvalServiceName:             true,
	boardv1connect.PackageServiceName:          true,
	boardv1connect.TriggerServiceName:          true,
	boardv1connect.RunServiceName:              true,
	boardv1connect.ToolServiceName:             true,
	boardv1connect.UserServiceName:             true,
	"grpc.health.v1.Health":                    true,
	"grpc.reflection.v1.ServerReflection":      true,
	"grpc.reflection.v1alpha.ServerReflection": true,
}

// registerHealth registers Check and Watch on srv.
func (b *Board) registerHealth(srv *connect.Server) {
	methods := healthv1.File_grpc_health_v1_health_proto.Services().ByName("Health").Methods()
	srv.Register(
		connect.Method{
			Spec: connect.Spec{
				StreamType: connect.StreamTypeUnary,
				Schema:     methods.ByName("Check"),
				Procedure:  healthv1.Health_Check_FullMethodName,
			},
			Handler: b.healthCheck,
		},
		connect.Method{
			Spec: connect.Spec{
				StreamType: connect.StreamTypeServer,
				Schema:     methods.ByName("Watch"),
				Procedure:  healthv1.Health_Watch_FullMethodName,
			},
			Handler: b.healthWatch,
		},
	)
}

// servingStatus is how the board stands now: its readiness.
func (b *Board) servingStatus(ctx context.Context) healthv1.HealthCheckResponse_ServingStatus {
	if b.notReady(ctx) != "" {
		return healthv1.HealthCheckResponse_NOT_SERVING
	}
	return healthv1.HealthCheckResponse_SERVING
}

// healthCheck answers how the board, or one service it serves, stands; a
// service it does not serve is not_found.
func (b *Board) healthCheck(ctx context.Context, _ connect.Spec, stream connect.ServerStream) error {
	var req healthv1.HealthCheckRequest
	if err := stream.Receive(&req); err != nil {
		return err
	}
	if !servedServices[req.GetService()] {
		return connect.NewError(connect.CodeNotFound, "service: not served by this board")
	}
	return stream.Send(&healthv1.HealthCheckResponse{Status: b.servingStatus(ctx)})
}

// healthWatch sends how the board, or one service, stands, then
// NOT_SERVING when the board begins to shut down (Config.DrainDelay before
// it ends its streams), and ends with unavailable when it does. (Over TLS
// the watcher receives both; an h2c connection is closed as the board
// stops, which may come first.) A store that stops answering meanwhile is
// not watched for: Check and /readyz say it. A service the board does not
// serve is SERVICE_UNKNOWN and stays so, as gRPC's health protocol has it.
// The stream ends when the caller goes or its credential does.
func (b *Board) healthWatch(ctx context.Context, _ connect.Spec, stream connect.ServerStream) error {
	var req healthv1.HealthCheckRequest
	if err := stream.Receive(&req); err != nil {
		return err
	}
	known := servedServices[req.GetService()]
	status := healthv1.HealthCheckResponse_SERVICE_UNKNOWN
	if known {
		status = b.servingStatus(ctx)
	}
	if err := stream.Send(&healthv1.HealthCheckResponse{Status: status}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case <-b.draining:
	}
	if known && status == healthv1.HealthCheckResponse_SERVING {
		_ = stream.Send(&healthv1.HealthCheckResponse{Status: healthv1.HealthCheckResponse_NOT_SERVING})
	}
	select {
	case <-ctx.Done():
		return nil
	case <-b.done:
	}
	return connect.NewError(connect.CodeUnavailable, "board shutting down")
}
