package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/cli"
)

// fleet is a real board on HTTP/2 over loopback with one agent linked to
// it (refund-bot, declaring two tools of the crm server), and the
// operator commands run against it in-process.
type fleet struct {
	b     *boardtest.Board
	admin string // an admin operator token
	link  *agentlink.Link
	api   boardv1connect.ApprovalServiceClient
	// unlink ends the agent's link (and waits for it); the test's cleanup
	// does too.
	unlink func()
}

// startFleet starts the board, with opts when given, and links the agent.
func startFleet(t *testing.T, opts ...boardtest.Options) *fleet {
	t.Helper()
	b := boardtest.Start(t, append(opts, boardtest.Options{})[0])
	f := &fleet{b: b, admin: b.OperatorToken("ops", identity.RoleAdmin)}
	f.api = boardv1connect.NewApprovalServiceClient(b.Client(f.admin))
	up := make(chan agentlink.State, 16)
	link, err := agentlink.New(agentlink.Config{
		BoardURL: b.URL,
		Token:    b.AgentToken("refund-bot"),
		Identity: agentlink.Identity{
			Name:        "refund-bot",
			Description: "refunds small orders",
			Tools:       []string{"crm.lookup", "crm.refund"},
		},
		OnState: func(s agentlink.State) {
			select {
			case up <- s:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.link = link
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = link.Run(ctx) }()
	f.unlink = func() { cancel(); <-done }
	t.Cleanup(f.unlink)
	select {
	case s := <-up:
		if !s.Up {
			t.Fatalf("link: %v", s.Err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("link not up within 20s")
	}
	return f
}

// env is the environment the commands see: the admin token in
// SYMPHONIX_TOKEN.
func (f *fleet) env(name string) string {
	if name == "SYMPHONIX_TOKEN" {
		return f.admin
	}
	return ""
}

// board runs the board command with --board pointing at the fleet's board.
func (f *fleet) board(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runWith(t, f.env, nil, append(args, "--board", f.b.URL)...)
}

// ok runs the board command and fails the test if it fails.
func (f *fleet) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, err := f.board(t, args...)
	if err != nil {
		t.Fatalf("board %s: %v\nstderr: %s", strings.Join(args, " "), err, errs)
	}
	return out
}

// runWith runs the board command in-process with stdin (nil: an empty
// pipe-like reader) and returns what it printed.
func runWith(t *testing.T, getenv func(string) string, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(getenv, &out, &errb)
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	root.SetIn(stdin)
	err = root.Run(t.Context(), args)
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("board %s: error on more than one line: %q", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), err
}

// wantExit fails the test unless err exits with code and says every one
// of words.
func wantExit(t *testing.T, err error, code int, words ...string) {
	t.Helper()
	if got := cli.ExitCode(err); got != code {
		t.Errorf("exit code %d (%v), want %d", got, err, code)
	}
	if err == nil {
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// raise has the agent raise an approval for a refund and returns its id.
func (f *fleet) raise(t *testing.T, run string, amount int) string {
	t.Helper()
	show := map[string]any{"amount": amount, "currency": "EUR", "to": "ann"}
	account := "ann's parcel arrived broken"
	digest, err := approvals.Digest(show, account)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.link.Raise(t.Context(), agentlink.Raise{
		Run: run, Node: "approve", Thread: "t-" + run,
		Ask: "refund " + itoa(amount) + " EUR to ann?", Show: show, Account: account, Digest: digest,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.ApprovalID
}

// governRefunds puts a rule that governs refund-bot's approve node.
func (f *fleet) governRefunds(t *testing.T) {
	t.Helper()
	f.ok(t, "rules", "put", "--id", "refunds", "--agent", "refund-bot", "--node", "approve", "--role", "approver", "--description", "refunds need a person")
}

// approval is an approval as the board has it now.
func (f *fleet) approval(t *testing.T, id string) *boardv1.Approval {
	t.Helper()
	res, err := f.api.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetApproval()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// decodeJSON decodes what a command printed with --output json.
func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("--output json: %v\n%s", err, s)
	}
	return v
}

// lines is a buffer that a watch writes to while the test reads it.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// watch runs a watch command until the returned stop is called; stop
// returns what the command returned.
func (f *fleet) watch(t *testing.T, args ...string) (out *lines, stop func() error) {
	t.Helper()
	out = new(lines)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		root := newRoot(f.env, out, io.Discard)
		done <- root.Run(ctx, append(args, "--board", f.b.URL))
	}()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { stop() })
	return out, stop
}

// regexpLine reports whether a line of s matches the regular expression.
func regexpLine(s, re string) bool {
	return regexp.MustCompile("(?m)" + re).MatchString(s)
}
