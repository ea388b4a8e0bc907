package board_test

import (
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestTokenConfusion: an agent token, an operator token, a session JWT
// and a pairing code are each accepted only in their own place — an
// operator RPC by bearer, an operator RPC by cookie, the agent link by
// bearer — and refused with unauthenticated everywhere else.
func TestTokenConfusion(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	session, csrf := bt.SignIn("alice@example.com", password)
	creds := map[string]string{
		"agent token":              bt.AgentToken("hello"),
		"operator token":           bt.OperatorToken("ops", identity.RoleAdmin),
		"session":                  session,
		"pairing code":             "K7QX2M9P",
		"pairing code with a dash": "K7QX-2M9P",
	}
	type place struct {
		name   string
		accept string // the credential accepted here
		call   func(t *testing.T, cred string) error
	}
	places := []place{
		{"operator rpc by bearer", "operator token", func(t *testing.T, cred string) error {
			_, err := bt.Agents(cred).ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
			return err
		}},
		{"operator rpc by cookie", "session", func(t *testing.T, cred string) error {
			_, err := boardv1connect.NewAgentServiceClient(bt.SessionClient(cred, csrf)).ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
			return err
		}},
		{"agent link by bearer", "agent token", func(t *testing.T, cred string) error {
			link := boardv1connect.NewAgentLinkServiceClient(bt.Client(cred))
			return helloErr(t.Context(), link, &boardv1.Hello{Name: "hello", Protocol: board.Protocol})
		}},
		{"agent link by cookie", "", func(t *testing.T, cred string) error {
			link := boardv1connect.NewAgentLinkServiceClient(bt.SessionClient(cred, csrf))
			return helloErr(t.Context(), link, &boardv1.Hello{Name: "hello", Protocol: board.Protocol})
		}},
	}
	for _, p := range places {
		for name, cred := range creds {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				err := p.call(t, cred)
				if name == p.accept {
					if err != nil {
						t.Fatalf("%s in its own place (%s): %v", name, p.name, err)
					}
					return
				}
				if got := connect.CodeOf(err); got != connect.CodeUnauthenticated {
					t.Fatalf("%s as %s: %v, want unauthenticated", name, p.name, err)
				}
			})
		}
	}
}

// TestOperatorTokenIsNotAPerson: an operator token cannot be minted under
// an address, so it can never pass for a signed-in person in a rule that
// names who decides.
func TestOperatorTokenIsNotAPerson(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	_, err := bt.Board.Tokens().Mint(t.Context(), identity.MintOptions{Kind: identity.KindOperator, Name: "ann@example.com", Role: identity.RoleAdmin})
	if err == nil || !strings.Contains(err.Error(), "not an address") {
		t.Fatalf("Mint(operator named ann@example.com) = %v, want refused", err)
	}
}
