package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestSecretsNeverLogged: a whole scenario at --log-level debug — a board,
// operator and agent tokens minted, a person added who sets a password
// through their setup link and signs in, the refund desk linking with its
// token, its approval raised and decided by the signed-in person — and
// then neither the board's nor the agent's output, every line of it,
// holds a token, the password, the setup link's token, the session cookie
// or its CSRF token.
func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	boardProc := start(t, "board", "--data", data, "--listen", "127.0.0.1:0", "--log-level", "debug")
	boardURL := boardProc.waitLine(t, listening)[1]
	mint := func(args ...string) string {
		out, _ := runCmd(t, "board", append([]string{"token"}, append(args, "--data", data)...)...)
		return strings.TrimSpace(out)
	}
	adminTok := mint("operator", "--name", "root", "--role", "admin")
	deskTok := mint("agent", "--name", "refund-desk")

	const email, password = "ann@example.com", "correct horse battery staple 42"
	link, _ := runCmd(t, "board", "user", "add", "--data", data, "--email", email, "--role", "approver")
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || !strings.HasPrefix(u.Fragment, "token=") {
		t.Fatalf("board user add printed %q, want a setup link with its token in the fragment", link)
	}
	setupTok := strings.TrimPrefix(u.Fragment, "token=")
	if res := postJSON(t, boardURL+"/auth/setup", map[string]string{"token": setupTok, "email": email, "password": password}); res.StatusCode != http.StatusOK {
		t.Fatalf("POST /auth/setup = %s", res.Status)
	}
	res := postJSON(t, boardURL+"/auth/signin", map[string]string{"email": email, "password": password})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /auth/signin = %s", res.Status)
	}
	var cookie string
	for _, c := range res.Cookies() {
		if c.Name == board.SessionCookie {
			cookie = c.Value
		}
	}
	var session struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.NewDecoder(res.Body).Decode(&session); err != nil || cookie == "" || session.CSRFToken == "" {
		t.Fatalf("sign in: cookie %q, csrf %q, %v; want both", cookie, session.CSRFToken, err)
	}
	res.Body.Close()

	admin := boardtest.NewClient(boardURL, adminTok)
	put, err := boardv1connect.NewApprovalServiceClient(admin).PutRule(t.Context(), &boardv1.PutRuleRequest{
		Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}})
	if err != nil {
		t.Fatalf("PutRule: %v", err)
	}
	g := &governance{board: boardProc, url: boardURL, data: data, rule: put.GetRule().GetId(),
		tools: boardv1connect.NewToolServiceClient(admin), deskToken: deskTok}

	desk := governedDesk(t)
	agent := startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "serve", "--log-level", "debug", "--monitor", boardURL, "--token", deskTok, desk)
	api := agent.waitLine(t, regexp.MustCompile(`^serving .* on (http://127\.0\.0\.1:\d+)$`))[1]
	agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: linked to `))
	if _, err := g.tools.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "refund-desk", On: []string{"orders.lookup_order", "orders.refund"}}); err != nil {
		t.Fatalf("ReplaceSwitches: %v", err)
	}
	agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `))

	// The signed-in person decides, through their session.
	// (Connect over HTTP/1.1, as a browser's.)
	g.approver = boardv1connect.NewApprovalServiceClient(connect.NewClient(connecthttp.NewTransport(http.DefaultClient, boardURL),
		connectHeaders(func(h *connect.Header) {
			h.Set("Cookie", board.SessionCookie+"="+cookie)
			h.Set(board.CSRFHeader, session.CSRFToken)
		})))
	thread := threadName(t)
	askForRefund(t, api, thread, g.rule)
	a := g.approvalOf(t, thread)
	if _, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest()}); err != nil {
		t.Fatalf("Decide as %s: %v", email, err)
	}
	agent.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`))

	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("agent after SIGTERM: %v", err)
	}
	if err := boardProc.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("board after SIGTERM: %v", err)
	}
	boardOut, agentOut := boardProc.output(), agent.output()
	// What is looked through must be there: the board's line for every
	// RPC (the person's among them) and the agent's debug lines.
	if !anyLine(boardOut, "msg=rpc procedure=/symphonix.board.v1.ApprovalService/Decide caller="+email) || !anyLine(agentOut, "level=DEBUG") {
		t.Fatalf("the outputs lack the Decide RPC's line or debug lines: the check below would prove nothing")
	}
	secrets := map[string]string{
		"the admin's token": adminTok, "the agent's token": deskTok, "the password": password,
		"the setup link's token": setupTok, "the session cookie": cookie, "the CSRF token": session.CSRFToken,
	}
	for what, secret := range secrets {
		if len(secret) < 16 {
			t.Fatalf("%s is %d characters: too short to look for", what, len(secret))
		}
		for name, out := range map[string][]string{"board": boardOut, "agent": agentOut} {
			for i, line := range out {
				if strings.Contains(line, secret) {
					// Which line, never the secret itself.
					t.Errorf("the %s's output, line %d, holds %s", name, i+1, what)
				}
			}
		}
	}
}

func anyLine(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func postJSON(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// connectHeaders is a client interceptor that sets headers on every call.
func connectHeaders(set func(*connect.Header)) connect.ClientInterceptor {
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			info, ok := connect.CallInfoForClientContext(ctx)
			if !ok {
				ctx, info = connect.NewClientContext(ctx)
			}
			set(info.RequestHeader())
			return next(ctx, spec)
		}
	}
}
