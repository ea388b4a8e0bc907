package board_test

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/ent/notification"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

const smtpPassword = "s3cret-smtp-pass"

// mailBoard is a board that emails through a test mail server wanting
// AUTH as "board".
func mailBoard(t *testing.T, r *boardv1.Rule, opts boardtest.Options) (*boardtest.Board, *boardtest.SMTPServer) {
	t.Helper()
	srv := boardtest.StartSMTP(t)
	srv.RequireAuth("board", smtpPassword)
	opts.NotifySMTP = srv.URL("board", smtpPassword)
	opts.NotifyFrom = "Board <board@example.com>"
	bt, _ := decideBoard(t, r, opts)
	return bt, srv
}

// email is one message read back.
type email struct {
	to      []string
	header  mail.Header
	subject string
	body    string
	raw     string
}

func readEmail(t *testing.T, m boardtest.SMTPMessage) email {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("a message that is not one: %v\n%s", err, m.Data)
	}
	raw, err := io.ReadAll(msg.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("body not quoted-printable: %v", err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("subject %q: %v", msg.Header.Get("Subject"), err)
	}
	return email{to: m.To, header: msg.Header, subject: subject, body: strings.ReplaceAll(string(body), "\r\n", "\n"), raw: string(m.Data)}
}

var actionLinkIn = regexp.MustCompile(`http://\S+/#act/([A-Za-z0-9_-]+)`)

// linkIn is the action link token in an email's body.
func linkIn(t *testing.T, e email) string {
	t.Helper()
	m := actionLinkIn.FindStringSubmatch(e.body)
	if m == nil {
		t.Fatalf("no action link in the email to %v:\n%s", e.to, e.body)
	}
	return m[1]
}

// emailsTo waits for n messages and returns them by their one recipient.
func emailsTo(t *testing.T, srv *boardtest.SMTPServer, n int) map[string]email {
	t.Helper()
	boardtest.Eventually(t, within, "the emails sent", func() bool { return len(srv.Messages()) >= n })
	out := map[string]email{}
	for _, m := range srv.Messages() {
		if len(m.To) != 1 {
			t.Fatalf("a message to %v, want one recipient each", m.To)
		}
		if _, ok := out[m.To[0]]; ok {
			t.Errorf("%s emailed twice", m.To[0])
		}
		out[m.To[0]] = readEmail(t, m)
	}
	return out
}

func recipients(m map[string]email) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEmailRaised: an approval raised under a role rule emails each
// enabled approver and admin (not a viewer, not a disabled approver) one
// message with the card's facts and their own action link, through which
// they, signed in, decide it; another person's use of it is refused.
func TestEmailRaised(t *testing.T) {
	t.Parallel()
	bt, srv := mailBoard(t, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	ann := signedIn(t, bt, "ann@example.com", identity.RoleApprover)
	bob := signedIn(t, bt, "bob@example.com", identity.RoleAdmin)
	bt.AddUser("vic@example.com", identity.RoleViewer, "")
	bt.AddUser("dan@example.com", identity.RoleApprover, "")
	if _, _, err := bt.Board.Users().SetDisabled(t.Context(), "dan@example.com", true, "test"); err != nil {
		t.Fatal(err)
	}
	l := openLink(t, bt, "desk")
	id := l.raised(refund("run-1", 1)).GetApprovalId()

	got := emailsTo(t, srv, 2)
	time.Sleep(1500 * time.Millisecond) // three sender passes: nothing more comes
	if n := len(srv.Messages()); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
	if r := recipients(got); !slices.Equal(r, []string{"ann@example.com", "bob@example.com"}) {
		t.Fatalf("emailed %v, want ann and bob", r)
	}
	for _, m := range srv.Messages() {
		if m.From != "board@example.com" || m.User != "board" {
			t.Errorf("sent from %q as %q, want board@example.com, authenticated as board", m.From, m.User)
		}
	}
	tokens := map[string]string{}
	for addr, e := range got {
		h := e.header
		if h.Get("From") != `"Board" <board@example.com>` || h.Get("To") != "<"+addr+">" || h.Get("MIME-Version") != "1.0" ||
			h.Get("Content-Type") != "text/plain; charset=utf-8" || h.Get("Content-Transfer-Encoding") != "quoted-printable" ||
			!strings.HasSuffix(h.Get("Message-ID"), "@example.com>") {
			t.Errorf("headers to %s: %v", addr, h)
		}
		if d, err := h.Date(); err != nil || time.Since(d) > time.Minute {
			t.Errorf("Date to %s: %v, %v", addr, d, err)
		}
		if e.subject != "Approval waits: Refund 5,000?" {
			t.Errorf("subject to %s: %q", addr, e.subject)
		}
		for _, want := range []string{"Ask:      Refund 5,000?", "Agent:    desk", "Node:     pay", "Run:      run-1", "Rule:     refunds",
			"Digest:   " + digestOf(1)[:len("sha256:")+12] + "…", "Approval: " + id,
			"\n" + `{"amount": 5000, "currency": "EUR", "to": {"name": "Ann"}}` + "\n",
			"This link opens the approval on the board after you sign in, asks you to confirm your decision, and works once, only for you (" + addr + "), until "} {
			if !strings.Contains(e.body, want) {
				t.Errorf("email to %s: %q missing:\n%s", addr, want, e.body)
			}
		}
		tokens[addr] = linkIn(t, e)
	}
	if tokens["ann@example.com"] == tokens["bob@example.com"] {
		t.Fatal("ann and bob were sent the same link")
	}

	link := tokens["ann@example.com"]
	opened, err := ann.OpenActionLink(t.Context(), &boardv1.OpenActionLinkRequest{Link: link})
	if err != nil {
		t.Fatalf("ann opens her emailed link: %v", err)
	}
	if opened.GetApproval().GetId() != id {
		t.Fatalf("opened %s, want %s", opened.GetApproval().GetId(), id)
	}
	_, err = bob.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digestOf(1), ActionLink: link})
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("bob decides with ann's link: %v, want permission_denied", err)
	}
	res, err := ann.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digestOf(1), ActionLink: link})
	if err != nil {
		t.Fatalf("ann decides with her emailed link: %v", err)
	}
	if res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("after ann's decision: %v", res.GetApproval().GetState())
	}
	if d, _ := l.nextDecision(within); d.GetApprovalId() != id || d.GetSay() != boardv1.Say_SAY_YES {
		t.Fatalf("decision on the link: %v", d)
	}
}

// TestEmailEscalation: a rule naming ann emails ann at the raise; its step
// naming ann and carl emails carl alone (ann was told), and nobody else
// (not the admin, whom the rule does not name).
func TestEmailEscalation(t *testing.T) {
	t.Parallel()
	bt, srv := mailBoard(t, &boardv1.Rule{Id: "named", Agent: "*", Node: "*", People: []string{"Ann@Example.com"},
		Escalation: []*boardv1.EscalationStep{{After: durationpb.New(700 * time.Millisecond), People: []string{"carl@example.com", "ann@example.com"}}}},
		boardtest.Options{RevocationPoll: 20 * time.Millisecond})
	for _, p := range []struct {
		email string
		role  identity.Role
	}{{"ann@example.com", identity.RoleViewer}, {"bob@example.com", identity.RoleAdmin}, {"carl@example.com", identity.RoleViewer}} {
		bt.AddUser(p.email, p.role, "")
	}
	l := openLink(t, bt, "desk")
	id := l.raised(refund("run-1", 1)).GetApprovalId()
	first := emailsTo(t, srv, 1)
	if r := recipients(first); !slices.Equal(r, []string{"ann@example.com"}) {
		t.Fatalf("at the raise, emailed %v, want ann", r)
	}
	boardtest.Eventually(t, within, "escalated", func() bool {
		a, err := bt.Store.Approval.Get(t.Context(), id)
		return err == nil && a.EscalationLevel == 1
	})
	all := emailsTo(t, srv, 2)
	time.Sleep(1500 * time.Millisecond)
	if n := len(srv.Messages()); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
	if r := recipients(all); !slices.Equal(r, []string{"ann@example.com", "carl@example.com"}) {
		t.Fatalf("emailed %v, want ann, then carl", r)
	}
	carl := all["carl@example.com"]
	if carl.subject != "Escalated (step 1): Approval waits: Refund 5,000?" || !strings.Contains(carl.body, "escalate (step 1)") {
		t.Errorf("the escalation's email: %q\n%s", carl.subject, carl.body)
	}
	linkIn(t, carl)
}

// TestEmailRefused: a server answering 451 at DATA is tried again until
// it takes the message, once; one refusing the recipient (550) is tried
// 10 times, then the notification is failed and audited naming the
// server's host, never its password; the approval waits on, decidable.
func TestEmailRefused(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	bt, srv := mailBoard(t, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{
		Now:        func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
		SessionTTL: 48 * time.Hour,
	})
	bt.AddUser("ann@example.com", identity.RoleApprover, "")
	l := openLink(t, bt, "desk")

	// 4xx: tried again (1 s later), then taken.
	srv.RefuseData("451 4.3.0 try again later")
	l.raised(refund("run-1", 1))
	boardtest.Eventually(t, within, "a first try", func() bool { return srv.Tries() >= 1 })
	srv.RefuseData("")
	boardtest.Eventually(t, within, "taken on a later try", func() bool { return len(srv.Messages()) == 1 })
	time.Sleep(1500 * time.Millisecond)
	if n, tries := len(srv.Messages()), srv.Tries(); n != 1 || tries < 2 {
		t.Errorf("%d messages in %d tries, want 1 in at least 2", n, tries)
	}

	// 5xx for good: 10 tries, then failed.
	srv.RefuseRcpt("550 5.1.1 no such mailbox")
	before := srv.Tries()
	second := l.raised(refund("run-2", 2)).GetApprovalId()
	row := func() *ent.Notification {
		n, err := bt.Store.Notification.Query().Where(notification.ApprovalID(second)).Only(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for attempt := 1; attempt <= 10; attempt++ {
		boardtest.Eventually(t, within, "another try", func() bool { return row().Attempts >= attempt })
		ahead.Add(int64(11 * time.Minute)) // past the longest wait between tries
	}
	n := row()
	if !n.Failed || n.Attempts != 10 || n.SentAt != nil || !strings.Contains(n.LastError, "550") {
		t.Errorf("notification: failed %v, %d attempts, sent %v, last error %q; want failed after 10, saying 550", n.Failed, n.Attempts, n.SentAt, n.LastError)
	}
	time.Sleep(1500 * time.Millisecond)
	if tries := srv.Tries() - before; tries != 10 {
		t.Errorf("%d tries, want 10", tries)
	}
	e, err := bt.Store.AuditEntry.Query().Where(auditentry.Action("notify.failed"), auditentry.Subject(second)).Only(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ := net.SplitHostPort(srv.Addr)
	d := string(e.Detail)
	if !strings.Contains(d, `"smtp":"smtp://`+srv.Addr+`"`) || !strings.Contains(d, host) || !strings.Contains(d, `"to":"ann@example.com"`) ||
		strings.Contains(d, smtpPassword) || strings.Contains(d, "board:") {
		t.Errorf("notify.failed detail %s: want the server's scheme and host, the recipient, and no credentials", d)
	}
	if a := stateOf(t, approver(bt, "root"), second); a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after the email failed: %v, want pending", a.GetState())
	}
	if a, err := decide(approver(bt, "ann"), t, second, "no", digestOf(2), ""); err != nil || a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_REJECTED {
		t.Fatalf("decided after the email failed: %v, %v", a.GetState(), err)
	}
}

// TestEmailServerHangs: a mail server that never answers holds up no
// raise, and costs each try its 5 s.
func TestEmailServerHangs(t *testing.T) {
	t.Parallel()
	bt, srv := mailBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	srv.Hang(true)
	bt.AddUser("ann@example.com", identity.RoleApprover, "")
	l := openLink(t, bt, "desk")
	start := time.Now()
	id := l.raised(refund("run-1", 1)).GetApprovalId()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the raise took %v with the mail server hanging", took)
	}
	boardtest.Eventually(t, within, "a try timed out", func() bool {
		n, err := bt.Store.Notification.Query().Where(notification.ApprovalID(id)).Only(t.Context())
		return err == nil && n.Attempts >= 1 && strings.Contains(n.LastError, "no answer within 5s")
	})
}

// TestEmailHeaderInjection: an ask with a line break carries no header of
// its own into the email, and the message goes to its one recipient.
func TestEmailHeaderInjection(t *testing.T) {
	t.Parallel()
	bt, srv := mailBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	bt.AddUser("ann@example.com", identity.RoleApprover, "")
	l := openLink(t, bt, "desk")
	r := refund("run-1", 1)
	r.Ask = "Refund?\r\nBcc: x@y\r\n\r\nforged body"
	l.raised(r)
	got := emailsTo(t, srv, 1)
	e := got["ann@example.com"]
	if r := recipients(got); !slices.Equal(r, []string{"ann@example.com"}) {
		t.Fatalf("emailed %v, want ann alone", r)
	}
	if _, ok := e.header["Bcc"]; ok {
		t.Errorf("a Bcc header made from the ask: %v", e.header)
	}
	var names []string
	for k := range e.header {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"Auto-Submitted", "Content-Transfer-Encoding", "Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
	if !slices.Equal(names, want) {
		t.Errorf("headers %v, want %v", names, want)
	}
	if strings.ContainsAny(e.subject, "\r\n") || !strings.Contains(e.subject, "Refund?") || !strings.Contains(e.subject, "Bcc: x@y") {
		t.Errorf("subject %q: want the ask on one line", e.subject)
	}
	head, _, _ := strings.Cut(e.raw, "\r\n\r\n")
	if lines := strings.Split(head, "\r\n"); len(lines) != len(want) {
		t.Errorf("the header section is %d lines, want %d, one a header:\n%s", len(lines), len(want), head)
	}
}

// TestEmailSTARTTLS: a server offering STARTTLS is sent the message over
// TLS, credentials and all.
func TestEmailSTARTTLS(t *testing.T) {
	t.Parallel()
	srv := boardtest.StartSMTP(t)
	srv.RequireAuth("board", smtpPassword)
	roots := srv.OfferTLS()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{
		NotifySMTP: srv.URL("board", smtpPassword), NotifyFrom: "board@example.com", NotifySMTPRoots: roots,
	})
	bt.AddUser("ann@example.com", identity.RoleApprover, "")
	openLink(t, bt, "desk").raised(refund("run-1", 1))
	boardtest.Eventually(t, within, "the email sent", func() bool { return len(srv.Messages()) == 1 })
	if m := srv.Messages()[0]; !m.TLS || m.User != "board" {
		t.Errorf("sent over TLS %v, as %q; want TLS, as board", m.TLS, m.User)
	}
}

// TestEmailNoCredentialsInTheClear: a server off loopback that offers no
// TLS is never sent the credentials: each try fails before AUTH.
func TestEmailNoCredentialsInTheClear(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.2:0") // loopback, but not by a name net/smtp trusts
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs on Linux, where all of 127.0.0.0/8 is loopback: %v", err)
		}
		t.Skipf("127.0.0.2: %v", err)
	}
	ln.Close()
	srv := boardtest.StartSMTPOn(t, "127.0.0.2:0")
	srv.RequireAuth("board", smtpPassword)
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{
		NotifySMTP: srv.URL("board", smtpPassword), NotifyFrom: "board@example.com",
	})
	bt.AddUser("ann@example.com", identity.RoleApprover, "")
	id := openLink(t, bt, "desk").raised(refund("run-1", 1)).GetApprovalId()
	boardtest.Eventually(t, within, "a try refused", func() bool {
		n, err := bt.Store.Notification.Query().Where(notification.ApprovalID(id)).Only(t.Context())
		return err == nil && n.Attempts >= 1 && strings.Contains(n.LastError, "unencrypted connection")
	})
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages sent without TLS", n)
	}
}

// TestEmailConfigChecked: a bad mail server URL, or one without a From
// address, is refused naming the field, never repeating the password.
func TestEmailConfigChecked(t *testing.T) {
	t.Parallel()
	db, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct{ smtp, from, says string }{
		{"ftp://mail.example.com", "board@example.com", "board: NotifySMTP: scheme \"ftp\""},
		{"smtp://", "board@example.com", "board: NotifySMTP: no host"},
		{"smtp://u:" + smtpPassword + "@mail.example.com:99999", "board@example.com", "board: NotifySMTP: port"},
		{"smtp://u:" + smtpPassword + "@mail.example.com/x", "board@example.com", "board: NotifySMTP: a path"},
		{"smtp://u:" + smtpPassword + "@mail.example.com", "", "board: NotifyFrom: required"},
		{"smtp://mail.example.com", "not an address", "board: NotifyFrom: \"not an address\" is not an email address"},
		{"smtp://mail.example.com", "board@example.com\r\nBcc: x@y", "board: NotifyFrom: one line"},
		{"", "board@example.com", "board: NotifyFrom: given without NotifySMTP"},
	} {
		b, err := board.New(t.Context(), board.Config{Store: db, NotifySMTP: tc.smtp, NotifyFrom: tc.from})
		if err == nil {
			b.Close()
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.says) || strings.Contains(err.Error(), smtpPassword) {
			t.Errorf("NotifySMTP %q, NotifyFrom %q: %v, want %q and no password", tc.smtp, tc.from, err, tc.says)
		}
	}
	for _, ok := range []string{"smtp://mail.example.com", "smtps://u:p@mail.example.com:465", "smtp://[::1]:25"} {
		if err := board.CheckSMTP(ok); err != nil {
			t.Errorf("CheckSMTP(%q): %v", ok, err)
		}
	}
}
