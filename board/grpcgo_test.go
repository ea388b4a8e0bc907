package board_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
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

// TestGRPCGo: a program that speaks grpc-go, with the stubs generated in
// api/ and nothing of connect, works the board over h2c and over TLS: a
// unary call, and its refusals with the gRPC status codes they should
// have; WatchAgents, a server stream, sees an agent come online and go;
// and the link itself, a bidi stream, from the agent's side: Hello,
// Welcome, Ping, Pong, a Raise and its Raised, and the Decision an
// operator's Decide (over grpc-go too) sends down it.
func TestGRPCGo(t *testing.T) {
	t.Parallel()
	for name, tls := range map[string]bool{"h2c": false, "tls": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testGRPCGo(t, boardtest.Start(t, boardtest.Options{TLS: tls}))
		})
	}
}

func testGRPCGo(t *testing.T, bt *boardtest.Board) {
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second) // the ceiling
	defer cancel()
	const agentName = "refund-desk"
	viewer := boardv1.NewAgentServiceClient(grpcConn(t, bt, bt.OperatorToken("ops", identity.RoleViewer)))

	// Unary: a list, and refusals.
	res, err := viewer.ListAgents(ctx, &boardv1.ListAgentsRequest{})
	if err != nil || len(res.GetAgents()) != 0 {
		t.Fatalf("ListAgents = %v, %v; want no agents", res, err)
	}
	for _, tc := range []struct {
		name   string
		client boardv1.AgentServiceClient
		code   codes.Code
	}{
		{"no token", boardv1.NewAgentServiceClient(grpcConn(t, bt, "")), codes.Unauthenticated},
		{"an agent's token", boardv1.NewAgentServiceClient(grpcConn(t, bt, bt.AgentToken("a"))), codes.Unauthenticated},
		{"a token the board did not mint", boardv1.NewAgentServiceClient(grpcConn(t, bt, "not.a.token")), codes.Unauthenticated},
	} {
		if _, err := tc.client.ListAgents(ctx, &boardv1.ListAgentsRequest{}); status.Code(err) != tc.code {
			t.Errorf("%s: ListAgents = %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := viewer.GetAgent(ctx, &boardv1.GetAgentRequest{}); status.Code(err) != codes.InvalidArgument ||
		!strings.HasPrefix(status.Convert(err).Message(), "name:") {
		t.Errorf("GetAgent without a name = %v, want invalid_argument naming name", err)
	}
	if _, err := viewer.GetAgent(ctx, &boardv1.GetAgentRequest{Name: "nobody"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetAgent(nobody) = %v, want not_found", err)
	}

	// A server stream: the agent comes online.
	watch, err := viewer.WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	seen := func(state boardv1.AgentState) {
		t.Helper()
		for {
			m, err := watch.Recv()
			if err != nil {
				t.Fatalf("WatchAgents, waiting for %s %s: %v", agentName, state, err)
			}
			if m.GetAgent().GetName() == agentName && m.GetAgent().GetState() == state {
				return
			}
		}
	}

	// The link, as an agent written with grpc-go speaks it.
	link, err := boardv1.NewAgentLinkServiceClient(grpcConn(t, bt, bt.AgentToken(agentName))).Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(m *boardv1.LinkRequest) {
		t.Helper()
		if err := link.Send(m); err != nil {
			t.Fatalf("link: send %v: %v", m, err)
		}
	}
	// next is the next message from the board that is not its ping (which
	// it answers) nor its tool switches.
	next := func() *boardv1.LinkResponse {
		t.Helper()
		for {
			m, err := link.Recv()
			if err != nil {
				t.Fatalf("link: receive: %v", err)
			}
			switch {
			case m.GetPing() != nil:
				send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pong{Pong: &boardv1.Pong{Seq: m.GetPing().GetSeq(), SendTime: m.GetPing().GetSendTime()}}})
			case m.GetSwitches() != nil:
			default:
				return m
			}
		}
	}
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{Name: agentName, Protocol: board.Protocol}}})
	if m := next(); m.GetWelcome().GetSession() == "" || m.GetWelcome().GetProtocol() != board.Protocol {
		t.Fatalf("hello: %v, want a welcome with a session in protocol %s", m, board.Protocol)
	}
	seen(boardv1.AgentState_AGENT_STATE_ONLINE)

	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 7}}})
	if m := next(); m.GetPong().GetSeq() != 7 {
		t.Fatalf("ping 7: %v, want its pong", m)
	}

	// A rule puts the approval in an approver's hands; the agent raises it.
	admin := boardv1.NewApprovalServiceClient(grpcConn(t, bt, bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.PutRule(ctx, &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: agentName, Node: "pay", Role: boardv1.Role_ROLE_APPROVER}}); err != nil {
		t.Fatalf("PutRule: %v", err)
	}
	show := map[string]any{"amount": 5000.0, "currency": "EUR"}
	account := "the mug arrived broken"
	digest, err := approvals.Digest(show, account)
	if err != nil {
		t.Fatal(err)
	}
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
		RequestId: "r1", Run: "run-1", Thread: "t1", Node: "pay", Ask: "Refund 5,000 EUR?",
		Show: `{"amount": 5000, "currency": "EUR"}`, Account: account, Digest: digest,
	}}})
	raised := next().GetRaised()
	if raised.GetRequestId() != "r1" || raised.GetApprovalId() == "" || raised.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("raise: %v, want raised r1, pending", raised)
	}

	// An approver decides over grpc-go; the decision arrives on the link.
	approver := boardv1.NewApprovalServiceClient(grpcConn(t, bt, bt.OperatorToken("ann", identity.RoleApprover)))
	decided, err := approver.Decide(ctx, &boardv1.DecideRequest{Id: raised.GetApprovalId(), Say: boardv1.Say_SAY_YES, Digest: digest})
	if err != nil || decided.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("Decide = %v, %v; want approved", decided, err)
	}
	d := next().GetDecision()
	if d.GetApprovalId() != raised.GetApprovalId() || d.GetSay() != boardv1.Say_SAY_YES || d.GetDigest() != digest ||
		!slices.Equal(d.GetWho(), []string{"ann"}) || d.GetRun() != "run-1" || d.GetNode() != "pay" {
		t.Fatalf("decision on the link: %v, want yes by ann for %s, digest %s, run-1 at pay", d, raised.GetApprovalId(), digest)
	}

	// The agent says goodbye: the watch sees it go.
	if err := link.CloseSend(); err != nil {
		t.Fatal(err)
	}
	seen(boardv1.AgentState_AGENT_STATE_OFFLINE)
}
