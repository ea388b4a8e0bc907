package board_test

import (
	"net/http"
	"slices"
	"testing"

	connectv1 "connectrpc.com/connect"
	"connectrpc.com/connect/v2/connecthttp"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect/v2"

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
	for _, want := range []string{"symphonix.board.v1.AgentService", "symphonix.board.v1.AgentLinkService"} {
		if !slices.Contains(names, want) {
			t.Errorf("ListServices = %v, want %s in it", names, want)
		}
	}
	if _, err := list(""); err == nil {
		t.Errorf("ListServices without a token: no error")
	}
}

// TestHealth: grpc.health.v1 answers SERVING to any token holder over gRPC,
// and unauthenticated to nobody.
func TestHealth(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	check := func(token string) (*grpchealth.CheckResponse, error) {
		hc := &http.Client{Transport: withBearer{token, h2c()}}
		return grpchealth.NewClient(hc, bt.URL, connectv1.WithGRPC()).Check(t.Context(), &grpchealth.CheckRequest{})
	}
	for name, tok := range map[string]string{"operator": bt.OperatorToken("ops", identity.RoleViewer), "agent": bt.AgentToken("a")} {
		res, err := check(tok)
		if err != nil || res.Status != grpchealth.StatusServing {
			t.Errorf("Check with an %s token = %v, %v; want SERVING", name, res, err)
		}
	}
	if _, err := check(""); connectv1.CodeOf(err) != connectv1.CodeUnauthenticated {
		t.Errorf("Check without a token = %v, want unauthenticated", err)
	}
}

type withBearer struct {
	token string
	next  http.RoundTripper
}

func (w withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if w.token != "" {
		r.Header.Set("Authorization", "Bearer "+w.token)
	}
	return w.next.RoundTrip(r)
}

func h2c() http.RoundTripper {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: p}
}
