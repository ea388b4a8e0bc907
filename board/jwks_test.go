package board_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/identity"

	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestJWKS: the published key verifies a token the board minted.
func TestJWKS(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	res, err := http.Get(bt.URL + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var set struct {
		Keys []struct{ Kty, Crv, Alg, Kid, X string }
	}
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].Kty != "OKP" || set.Keys[0].Crv != "Ed25519" || set.Keys[0].Alg != "EdDSA" {
		t.Fatalf("JWKS = %+v, want one Ed25519 key", set)
	}
	x, err := base64.RawURLEncoding.DecodeString(set.Keys[0].X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		t.Fatalf("x = %q: %v", set.Keys[0].X, err)
	}
	tok := bt.OperatorToken("ops", identity.RoleViewer)
	parsed, err := jwt.Parse(tok, func(tk *jwt.Token) (any, error) { return ed25519.PublicKey(x), nil },
		jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience(identity.Audience), jwt.WithIssuer(identity.Issuer))
	if err != nil || parsed.Header["kid"] != set.Keys[0].Kid || parsed.Header["typ"] != "operator+jwt" {
		t.Fatalf("token against the JWKS: %v, header %v", err, parsed.Header)
	}
}

// TestConnectJSONFieldNames: what a curl user sees.
func TestConnectJSONFieldNames(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	states, _ := runAgent(t, bt.URL, bt.AgentToken("json"), agentJSON, func(c *agentlink.Config) {
		c.Capabilities = []string{"pause"}
	})
	await(t, states, 5*time.Second)
	req, err := http.NewRequest("POST", bt.URL+"/symphonix.board.v1.AgentService/ListAgents", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bt.OperatorToken("ops", identity.RoleViewer))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var got struct {
		Agents []map[string]any `json:"agents"`
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Agents) != 1 {
		t.Fatalf("ListAgents JSON = %s (%v), want one agent", body, err)
	}
	for _, field := range []string{"name", "state", "capabilities", "protocol", "build", "lastSeenTime", "firstSeenTime", "session"} {
		if _, ok := got.Agents[0][field]; !ok {
			t.Errorf("agents[0] has no %q: %s", field, body)
		}
	}
}

var agentJSON = agentlink.Identity{Name: "json", Build: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
