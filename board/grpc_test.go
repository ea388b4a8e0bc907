package board_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"connectrpc.com/connect/v2/connecthttp"
	"connectrpc.com/grpcreflect/v2"
	"google.golang.org/grpc/codes"
	healthv1 "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestReflection: grpcurl-style reflection over the gRPC protocol lists the
// board's services for an operator, and nothing for a caller without one.
func TestReflection(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	list := func(token string) ([]string, error) {
		s := grpcreflect.NewClient(bt.Client(token, connecthttp.WithGRPC())).NewStream(t.Context())
		defer s.Close()
		names, err := s.ListServices()
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = string(n)
		}
		return out, err
	}
	names, err := list(bt.OperatorToken("ops", identity.RoleViewer))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"symphonix.board.v1.AgentService", "symphonix.board.v1.AgentLinkService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("ListServices = %v, want %s in it", names, want)
		}
	}
	if _, err := list(""); err == nil {
		t.Errorf("ListServices without a token: no error")
	}
}

// TestHealth: grpc.health.v1's Check answers SERVING over gRPC to any
// valid token, operator's or agent's, through grpc-go's own health client,
// and to a caller without one (TestProbes); a service the board does not
// serve is not_found to Check and SERVICE_UNKNOWN to Watch; List is
// unimplemented; a watcher on a board serving TLS hears NOT_SERVING when
// the board begins to shut down, and the stream then ends with
// unavailable.
func TestHealth(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second) // the ceiling
	defer cancel()
	operator := healthv1.NewHealthClient(grpcConn(t, bt, bt.OperatorToken("ops", identity.RoleViewer)))
	agent := healthv1.NewHealthClient(grpcConn(t, bt, bt.AgentToken("a")))
	nobody := healthv1.NewHealthClient(grpcConn(t, bt, ""))

	for _, tc := range []struct {
		name    string
		client  healthv1.HealthClient
		service string
		code    codes.Code
	}{
		{"operator, the board", operator, "", codes.OK},
		{"operator, the link", operator, boardv1connect.AgentLinkServiceName, codes.OK},
		{"agent, the board", agent, "", codes.OK},
		{"agent, approvals", agent, boardv1connect.ApprovalServiceName, codes.OK},
		{"operator, a service not served", operator, "acme.v1.Nothing", codes.NotFound},
		{"no token", nobody, "", codes.OK},
	} {
		res, err := tc.client.Check(ctx, &healthv1.HealthCheckRequest{Service: tc.service})
		if status.Code(err) != tc.code {
			t.Errorf("%s: Check = %v, want %s", tc.name, err, tc.code)
			continue
		}
		if err == nil && res.GetStatus() != healthv1.HealthCheckResponse_SERVING {
			t.Errorf("%s: Check = %s, want SERVING", tc.name, res.GetStatus())
		}
	}

	if _, err := operator.List(ctx, &healthv1.HealthListRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("List = %v, want unimplemented", err)
	}

	unknown, err := operator.Watch(ctx, &healthv1.HealthCheckRequest{Service: "acme.v1.Nothing"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := unknown.Recv(); err != nil || res.GetStatus() != healthv1.HealthCheckResponse_SERVICE_UNKNOWN {
		t.Errorf("Watch of a service not served = %v, %v; want SERVICE_UNKNOWN", res, err)
	}

	// Over TLS, where the board's shutdown lets what a handler wrote reach
	// its client (an h2c connection is closed at once).
	tlsBoard := boardtest.Start(t, boardtest.Options{TLS: true})
	w, err := healthv1.NewHealthClient(grpcConn(t, tlsBoard, tlsBoard.AgentToken("a"))).Watch(ctx, &healthv1.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := w.Recv(); err != nil || res.GetStatus() != healthv1.HealthCheckResponse_SERVING {
		t.Fatalf("Watch = %v, %v; want SERVING first", res, err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tlsBoard.Stop()
	}()
	defer func() { <-stopped }()
	if res, err := w.Recv(); err != nil || res.GetStatus() != healthv1.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Watch while the board shuts down = %v, %v; want NOT_SERVING", res, err)
	}
	if _, err := w.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("Watch after NOT_SERVING = %v, want unavailable", err)
	}
}
