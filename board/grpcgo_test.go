package board_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/symphonix/symphonix/internal/boardtest"
)

// grpcConn is a grpc-go connection to bt: over h2c, or over TLS trusting
// the board's certificate when bt serves TLS. token, when not "", goes
// with every call as a bearer credential, as grpc-go's per-RPC
// credentials send it.
func grpcConn(t *testing.T, bt *boardtest.Board, token string) *grpc.ClientConn {
	t.Helper()
	tc := bt.TLSConfig()
	transport := insecure.NewCredentials()
	if tc != nil {
		transport = credentials.NewTLS(tc)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(transport)}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken{token: token, secure: tc != nil}))
	}
	conn, err := grpc.NewClient("passthrough:///"+bt.Addr, opts...)
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// bearerToken is a token sent in the authorization header of every call.
// Over h2c it must not ask for transport security, or grpc-go would refuse
// to send it.
type bearerToken struct {
	token  string
	secure bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearerToken) RequireTransportSecurity() bool { return b.secure }
