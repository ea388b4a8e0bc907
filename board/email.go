package board

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/ent/user"
	"github.com/symphonix/symphonix/identity"
)

// Email notifications (docs/notifications.md): with Config.NotifySMTP, an
// approval raised under a rule is emailed to each person who may decide
// it then, and each step of its escalation to the people the step adds;
// each email carries the recipient's own action link. Each email is a row
// of notifications (target "mailto:" and the address), written in the
// raise's or the escalation's transaction and sent by the same sender as
// the webhooks, with the same claims, retries and audit.
const (
	// MaxEmailRecipients is the most people one raise or one escalation
	// step emails; past it the rest are not emailed, and the cut is
	// logged and audited (notify.cut).
	MaxEmailRecipients = 50
	// mailtoPrefix starts the target of a notification that is an email.
	mailtoPrefix = "mailto:"
	// emailShowMax and emailAskMax bound what an email quotes of the
	// shown values and the ask (the card has them all), so that a message
	// stays within a notification's 64 KiB.
	emailShowMax = 12 << 10
	emailAskMax  = 2 << 10
	// emailSubjectMax is the most runes of the ask a subject carries.
	emailSubjectMax = 100
	maxMailAddress  = 254
)

// smtpServer is Config.NotifySMTP, read.
type smtpServer struct {
	implicitTLS bool   // smtps://: TLS from the first byte
	host        string // the name TLS and AUTH check
	addr        string // host:port
	user, pass  string
}

// String is the server as logs and the audit show it: scheme, host and
// port, never the user or the password.
func (s *smtpServer) String() string {
	if s.implicitTLS {
		return "smtps://" + s.addr
	}
	return "smtp://" + s.addr
}

// CheckSMTP validates Config.NotifySMTP (--notify-smtp): an smtp:// or
// smtps:// URL with a host, an optional port and optional credentials.
// Its errors never repeat the URL, whose password is a secret.
func CheckSMTP(s string) error {
	_, err := parseSMTP(s)
	return err
}

// CheckMailFrom validates Config.NotifyFrom (--notify-from): one email
// address, with or without a display name.
func CheckMailFrom(s string) error {
	_, err := parseMailFrom(s)
	return err
}

func parseSMTP(s string) (*smtpServer, error) {
	const want = "want smtp://[user:password@]host[:port] (STARTTLS when offered) or smtps://… (TLS)"
	u, err := url.Parse(s)
	if err != nil || len(s) > maxWebhookURL {
		return nil, errors.New(want) // not err: it repeats the URL
	}
	srv := &smtpServer{host: u.Hostname()}
	port := "587"
	switch u.Scheme {
	case "smtp":
	case "smtps":
		srv.implicitTLS, port = true, "465"
	default:
		return nil, fmt.Errorf("scheme %q: %s", u.Scheme, want)
	}
	switch {
	case srv.host == "" || u.Opaque != "":
		return nil, fmt.Errorf("no host: %s", want)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("a path, query or fragment: %s", want)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %q: want 1 to 65535", p)
		}
		port = p
	}
	srv.addr = net.JoinHostPort(srv.host, port)
	if u.User != nil {
		srv.user = u.User.Username()
		srv.pass, _ = u.User.Password()
		if srv.user == "" {
			return nil, errors.New("credentials without a user name: " + want)
		}
	}
	return srv, nil
}

func parseMailFrom(s string) (*mail.Address, error) {
	if s == "" {
		return nil, errors.New("required: the address emails come from")
	}
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("one line, please")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an email address", s)
	}
	if at := strings.LastIndexByte(a.Address, '@'); at <= 0 || at == len(a.Address)-1 || len(a.Address) > maxMailAddress {
		return nil, fmt.Errorf("%q is not an email address", s)
	}
	return a, nil
}

// checkMail reads cfg's SMTP settings: nil without a server.
func checkMail(cfg Config) (*smtpServer, *mail.Address, error) {
	if cfg.NotifySMTP == "" {
		if cfg.NotifyFrom != "" {
			return nil, nil, errors.New("board: NotifyFrom: given without NotifySMTP")
		}
		return nil, nil, nil
	}
	srv, err := parseSMTP(cfg.NotifySMTP)
	if err != nil {
		return nil, nil, fmt.Errorf("board: NotifySMTP: %w", err)
	}
	from, err := parseMailFrom(cfg.NotifyFrom)
	if err != nil {
		return nil, nil, fmt.Errorf("board: NotifyFrom: %w", err)
	}
	return srv, from, nil
}

// deciders is who a rule, or a step of its escalation, lets decide, as a
// condition on users (allowedBy's, for a signed-in person).
func deciders(people []string, role string) predicate.User {
	if len(people) > 0 {
		canon := make([]string, 0, len(people))
		for _, p := range people {
			if c, err := canonicalPerson(p); err == nil {
				canon = append(canon, c)
			}
		}
		return user.EmailIn(canon...)
	}
	if role == identity.RoleAdmin.String() {
		return user.Role(identity.RoleAdmin.String())
	}
	return user.RoleIn(identity.RoleApprover.String(), identity.RoleAdmin.String())
}

// emailRecipients is who is emailed about row under r: at the raise
// (step 0) the enabled people who may decide it, at step k those the step
// adds; never one the rule's self-approval check would refuse. At most
// MaxEmailRecipients, by address; total is how many there were.
func (b *Board) emailRecipients(ctx context.Context, tx *ent.Tx, r *ent.Rule, row *ent.Approval, step int) (to []string, total int, err error) {
	where := []predicate.User{user.Disabled(false)}
	if step == 0 {
		where = append(where, deciders(r.People, r.Role))
	} else {
		if step > len(r.Escalation) {
			return nil, 0, nil
		}
		s := r.Escalation[step-1]
		told := []predicate.User{deciders(r.People, r.Role)}
		for _, e := range r.Escalation[:step-1] {
			told = append(told, deciders(e.People, e.Role))
		}
		where = append(where, deciders(s.People, s.Role), user.Not(user.Or(told...)))
	}
	users, err := tx.User.Query().Where(where...).Order(ent.Asc(user.FieldEmail)).Limit(MaxEmailRecipients + 1).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	total = len(users)
	if total > MaxEmailRecipients {
		if total, err = tx.User.Query().Where(where...).Count(ctx); err != nil {
			return nil, 0, err
		}
		users = users[:MaxEmailRecipients]
	}
	for _, u := range users {
		if !r.AllowSelfApproval {
			in, err := inConversation(ctx, tx, u.Email, row)
			if err != nil {
				return nil, 0, err
			}
			if in {
				continue // may not decide it
			}
		}
		to = append(to, u.Email)
	}
	return to, total, nil
}

// enqueueEmails writes, in tx, an email about row (event "raised", or
// "escalated" to step) to each person it goes to.
func (b *Board) enqueueEmails(ctx context.Context, tx *ent.Tx, row *ent.Approval, event string, step int, now time.Time) error {
	if b.mail == nil || row.RuleID == "" {
		return nil
	}
	r, err := tx.Rule.Get(ctx, row.RuleID)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	to, total, err := b.emailRecipients(ctx, tx, r, row, step)
	if err != nil {
		return err
	}
	if total > MaxEmailRecipients {
		b.log.WarnContext(ctx, "an approval's email notification cut", "approval", row.ID, "event", event, "recipients", total, "emailed", MaxEmailRecipients)
		if err := b.audit.Append(ctx, tx, audit.Record{Actor: "board", Action: "notify.cut", Subject: row.ID, At: now, Detail: map[string]any{
			"event": event, "step": step, "recipients": total, "emailed": MaxEmailRecipients,
		}}); err != nil {
			return err
		}
	}
	creates := make([]*ent.NotificationCreate, 0, len(to))
	for _, addr := range to {
		msg, err := b.emailMessage(addr, row, event, step, now)
		if err != nil {
			return err
		}
		creates = append(creates, tx.Notification.Create().SetApprovalID(row.ID).SetEvent(event).SetTarget(mailtoPrefix+addr).
			SetBody(msg).SetCreatedAt(now).SetNextAt(now))
	}
	if len(creates) == 0 {
		return nil
	}
	return tx.Notification.CreateBulk(creates...).Exec(ctx)
}

// oneLine is s as one line: each control character (line breaks among
// them) a space.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// cutRunes is s cut to n runes, marked when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// emailMessage is the email to addr about row: headers and a plain text,
// quoted-printable body saying what the approval's card shows, and addr's
// own action link.
func (b *Board) emailMessage(addr string, row *ent.Approval, event string, step int, now time.Time) ([]byte, error) {
	link, expires, err := b.actionLink(addr, row, now)
	if err != nil {
		return nil, err
	}
	ask := oneLine(row.Ask)
	subject := "Approval waits: " + cutRunes(ask, emailSubjectMax)
	lead := "An approval waits for a decision, and you may decide it."
	if event == "escalated" {
		subject = fmt.Sprintf("Escalated (step %d): %s", step, subject)
		lead = fmt.Sprintf("An approval has waited long enough to escalate (step %d), and you may now decide it.", step)
	}
	digest := row.Digest
	if len(digest) > len("sha256:")+12 {
		digest = digest[:len("sha256:")+12] + "…"
	}
	var body strings.Builder
	fmt.Fprintf(&body, "%s\n\n", lead)
	for _, f := range [][2]string{
		{"Ask", cutText(ask, emailAskMax)}, {"Agent", row.Agent}, {"Node", row.Node}, {"Run", row.Run},
		{"Rule", row.RuleID}, {"Digest", digest + " (compare with the card)"}, {"Approval", row.ID},
	} {
		fmt.Fprintf(&body, "%-9s %s\n", f[0]+":", oneLine(f[1]))
	}
	body.WriteString("\n")
	if link != "" {
		fmt.Fprintf(&body, "Decide: %s\n\n", link)
		fmt.Fprintf(&body, "This link opens the approval on the board after you sign in, asks you to confirm your decision, "+
			"and works once, only for you (%s), until %s.\n", addr, expires.UTC().Format("2006-01-02 15:04 MST"))
	} else {
		body.WriteString("Open the board and sign in to decide it (this board has no public URL to link to).\n")
	}
	fmt.Fprintf(&body, "\nShown, exactly as the agent sent it:\n\n%s\n", cutText(row.Show, emailShowMax))
	body.WriteString("\n-- \nSent by the board, because you may decide this approval.\n")

	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	domain := b.mailFrom.Address[strings.LastIndexByte(b.mailFrom.Address, '@')+1:]
	var msg bytes.Buffer
	for _, h := range [][2]string{
		{"From", b.mailFrom.String()},
		{"To", (&mail.Address{Address: addr}).String()},
		{"Subject", mime.QEncoding.Encode("utf-8", oneLine(subject))},
		{"Date", now.Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id) + "@" + domain + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
		{"Auto-Submitted", "auto-generated"},
	} {
		msg.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	msg.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&msg)
	if _, err := qp.Write([]byte(body.String())); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	if msg.Len() > 64<<10 {
		return nil, fmt.Errorf("email about approval %s: %d bytes, at most 64 KiB", row.ID, msg.Len())
	}
	return msg.Bytes(), nil
}

// sendEmail sends msg to addr through the board's SMTP server, all within
// notifyTimeout: STARTTLS when the server offers it (smtps:// is TLS from
// the start); credentials only over TLS or to a server on loopback
// (net/smtp's PlainAuth refuses the rest).
func (b *Board) sendEmail(ctx context.Context, addr string, msg []byte) error {
	srv := b.mail
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	tlsConfig := &tls.Config{ServerName: srv.host, MinVersion: tls.VersionTLS12, RootCAs: b.cfg.NotifySMTPRoots}
	dialer := &net.Dialer{}
	var conn net.Conn
	var err error
	if srv.implicitTLS {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", srv.addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", srv.addr)
	}
	if err != nil {
		return srv.redact(err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	err = srv.converse(conn, tlsConfig, b.mailFrom.Address, addr, msg)
	if err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", notifyTimeout, err)
	}
	return srv.redact(err)
}

// converse speaks SMTP on conn: one message from from to to.
func (srv *smtpServer) converse(conn net.Conn, tlsConfig *tls.Config, from, to string, msg []byte) error {
	c, err := smtp.NewClient(conn, srv.host)
	if err != nil {
		return err
	}
	defer c.Close()
	if !srv.implicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConfig); err != nil {
				return fmt.Errorf("STARTTLS: %w", err)
			}
		}
	}
	if srv.user != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("the server offers no AUTH, and the board has credentials for it")
		}
		if err := c.Auth(smtp.PlainAuth("", srv.user, srv.pass, srv.host)); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if err := c.Mail(from); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	_ = c.Quit() // sent: the server took it
	return nil
}

// redact is err with the server's password, should anything repeat it,
// replaced.
func (srv *smtpServer) redact(err error) error {
	if err == nil || srv.pass == "" || !strings.Contains(err.Error(), srv.pass) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), srv.pass, "***"))
}

// emailTarget reports whether a notification's target is an email, and
// to whom.
func emailTarget(target string) (string, bool) {
	return strings.CutPrefix(target, mailtoPrefix)
}

// sendsEmail reports whether this board sends emails: rows for email wait
// for a board that does.
func (b *Board) sendsEmail() bool { return b.mail != nil }
