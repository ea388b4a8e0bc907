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
// It needs a token like every RPC (any valid operator or agent token; see
// policy), and is held to it while Watch stays open (streams.go).
//
// The board, and every service it serves, is SERVING from the moment it
// serves until it begins to shut down, and NOT_SERVING from then on. List
// is not served (unimplemented).

// servedServices are the services Check and Watch know, by full name; ""
// is the board as a whole.
var servedServices = map[string]bool{
	"":                                         true,
	boardv1connect.AgentLinkServiceName:        true,
	boardv1connect.AgentServiceName:            true,
	boardv1connect.ApprovalServiceName:         true,
	boardv1connect.AuditServiceName:            true,
	boardv1connect.ConversationServiceName:     true,
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

// servingStatus is how the board stands now.
func (b *Board) servingStatus() healthv1.HealthCheckResponse_ServingStatus {
	select {
	case <-b.done:
		return healthv1.HealthCheckResponse_NOT_SERVING
	default:
		return healthv1.HealthCheckResponse_SERVING
	}
}

// healthCheck answers how the board, or one service it serves, stands; a
// service it does not serve is not_found.
func (b *Board) healthCheck(_ context.Context, _ connect.Spec, stream connect.ServerStream) error {
	var req healthv1.HealthCheckRequest
	if err := stream.Receive(&req); err != nil {
		return err
	}
	if !servedServices[req.GetService()] {
		return connect.NewError(connect.CodeNotFound, "service: not served by this board")
	}
	return stream.Send(&healthv1.HealthCheckResponse{Status: b.servingStatus()})
}

// healthWatch sends how the board, or one service, stands, then again when
// that changes: NOT_SERVING when the board begins to shut down, before the
// stream ends with unavailable. (Over TLS the watcher receives both; an h2c
// connection is closed as the board stops, which may come first.) A service the board does not serve is
// SERVICE_UNKNOWN and stays so, as gRPC's health protocol has it. The
// stream ends when the caller goes or its credential does.
func (b *Board) healthWatch(ctx context.Context, _ connect.Spec, stream connect.ServerStream) error {
	var req healthv1.HealthCheckRequest
	if err := stream.Receive(&req); err != nil {
		return err
	}
	known := servedServices[req.GetService()]
	status := healthv1.HealthCheckResponse_SERVICE_UNKNOWN
	if known {
		status = b.servingStatus()
	}
	if err := stream.Send(&healthv1.HealthCheckResponse{Status: status}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case <-b.done:
	}
	if known && status == healthv1.HealthCheckResponse_SERVING {
		_ = stream.Send(&healthv1.HealthCheckResponse{Status: healthv1.HealthCheckResponse_NOT_SERVING})
	}
	return connect.NewError(connect.CodeUnavailable, "board shutting down")
}
