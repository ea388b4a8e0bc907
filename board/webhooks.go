package board

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/notification"
	"github.com/symphonix/symphonix/ent/predicate"
)

// Notifications (docs/notifications.md): an approval raised under a rule,
// and each step of its escalation, is announced to the webhooks the board
// was given (Config.NotifyWebhooks: Slack-, Teams- and Discord-compatible
// incoming webhooks), and emailed to the people who may decide it
// (email.go). Each message is a row written in the change's own
// transaction, so none is lost to a crash; a sender on each board claims
// due rows (moving next_at on, so no other board sends them meanwhile),
// posts them with a timeout, and on a failure tries again later, doubling
// the wait, until maxNotifyAttempts. Sending never blocks an approval.
const (
	// MaxNotifyWebhooks is the most webhooks a board posts to.
	MaxNotifyWebhooks = 8
	maxWebhookURL     = 2048
	notifyTimeout     = 5 * time.Second
	notifyEvery       = 500 * time.Millisecond
	notifyBatch       = 32
	notifyFirstRetry  = time.Second
	notifyLastRetry   = 10 * time.Minute
	maxNotifyAttempts = 10
	// notifyClaim: how long a claimed row waits before another board may
	// try it (a board that died while sending).
	notifyClaim = 30 * time.Second
	// notifyKeep: sent and failed rows are swept after this.
	notifyKeep = 7 * 24 * time.Hour
)

// CheckWebhooks validates Config.NotifyWebhooks.
func CheckWebhooks(urls []string) error {
	if len(urls) > MaxNotifyWebhooks {
		return fmt.Errorf("board: NotifyWebhooks: %d, at most %d", len(urls), MaxNotifyWebhooks)
	}
	for i, s := range urls {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > maxWebhookURL {
			return fmt.Errorf("board: NotifyWebhooks[%d]: want an http or https URL of at most %d bytes", i, maxWebhookURL)
		}
	}
	return nil
}

// webhookMessage is what a webhook is posted: text (Slack, Teams) and
// content (Discord) say it in one line; approval is the card's facts.
type webhookMessage struct {
	Text     string          `json:"text"`
	Content  string          `json:"content"`
	Event    string          `json:"event"`
	Approval webhookApproval `json:"approval"`
}

type webhookApproval struct {
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Node   string `json:"node"`
	Run    string `json:"run"`
	Ask    string `json:"ask"`
	Digest string `json:"digest"`
	Rule   string `json:"rule"`
	// Show: what is shown, exactly as the agent sent it.
	Show json.RawMessage `json:"show"`
	Step int             `json:"escalation_step,omitempty"`
	// URL: the approval on the board (its page; the person decides there
	// after signing in), when the board knows its public URL.
	URL string `json:"url,omitempty"`
}

// approvalPage is the address of approval id on the board's web page, or
// "" without a public URL.
func (b *Board) approvalPage(id string) string {
	if b.cfg.PublicURL == "" {
		return ""
	}
	return strings.TrimRight(b.cfg.PublicURL, "/") + "/#approval/" + url.PathEscape(id)
}

// enqueueNotifications writes, in tx, the notifications about row (event
// "raised", or "escalated" to step): to each webhook, and an email to each
// person it goes to (email.go).
func (b *Board) enqueueNotifications(ctx context.Context, tx *ent.Tx, row *ent.Approval, event string, step int, now time.Time) error {
	if err := b.enqueueWebhooks(ctx, tx, row, event, step, now); err != nil {
		return err
	}
	return b.enqueueEmails(ctx, tx, row, event, step, now)
}

// enqueueWebhooks writes, in tx, a message to each webhook about row.
func (b *Board) enqueueWebhooks(ctx context.Context, tx *ent.Tx, row *ent.Approval, event string, step int, now time.Time) error {
	if len(b.cfg.NotifyWebhooks) == 0 {
		return nil
	}
	short := row.Digest
	if len(short) > len("sha256:")+12 {
		short = short[:len("sha256:")+12] + "…"
	}
	page := b.approvalPage(row.ID)
	open := ""
	if page != "" {
		open = " Open it: " + page + "."
	}
	line := fmt.Sprintf("Approval %s waits: %q (agent %s, node %s, rule %s, digest %s).%s Shown: %s", row.ID, row.Ask, row.Agent, row.Node, row.RuleID, short, open, row.Show)
	if event == "escalated" {
		line = fmt.Sprintf("Escalated (step %d): ", step) + line
	}
	show := json.RawMessage(row.Show)
	if !json.Valid(show) {
		show = json.RawMessage("null")
	}
	body, err := json.Marshal(webhookMessage{Text: line, Content: cutText(line, 2000), Event: event, Approval: webhookApproval{
		ID: row.ID, Agent: row.Agent, Node: row.Node, Run: row.Run, Ask: row.Ask, Digest: row.Digest, Rule: row.RuleID, Show: show, Step: step,
		URL: page,
	}})
	if err != nil {
		return err
	}
	if len(body) > 64<<10 {
		return nil // not sent: a raise's show is bounded well below this
	}
	creates := make([]*ent.NotificationCreate, 0, len(b.cfg.NotifyWebhooks))
	for _, target := range b.cfg.NotifyWebhooks {
		creates = append(creates, tx.Notification.Create().SetApprovalID(row.ID).SetEvent(event).SetTarget(target).
			SetBody(body).SetCreatedAt(now).SetNextAt(now))
	}
	return tx.Notification.CreateBulk(creates...).Exec(ctx)
}

// runNotifier sends due notifications until the board closes.
func (b *Board) runNotifier() {
	defer close(b.notifierDone)
	if len(b.cfg.NotifyWebhooks) == 0 && !b.sendsEmail() {
		return
	}
	client := &http.Client{Timeout: notifyTimeout}
	tick := time.NewTicker(notifyEvery)
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-b.done
		cancel()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.sendDue(ctx, client)
	}
}

// sendDue claims and sends the notifications due now, a batch at most.
func (b *Board) sendDue(ctx context.Context, client *http.Client) {
	now := b.now().UTC().Truncate(time.Microsecond)
	due := []predicate.Notification{notification.SentAtIsNil(), notification.Failed(false), notification.NextAtLTE(now)}
	if !b.sendsEmail() {
		// Emails wait for a board given the mail server.
		due = append(due, notification.Not(notification.TargetHasPrefix(mailtoPrefix)))
	}
	rows, err := b.db.Notification.Query().
		Where(due...).
		Order(ent.Asc(notification.FieldNextAt)).
		Limit(notifyBatch).
		All(ctx)
	if err != nil {
		if ctx.Err() == nil {
			b.log.WarnContext(ctx, "look for notifications to send", "err", err.Error())
		}
		return
	}
	done := make(chan struct{}, len(rows))
	for _, n := range rows {
		claimed, err := b.db.Notification.Update().
			Where(notification.ID(n.ID), notification.SentAtIsNil(), notification.NextAt(n.NextAt)).
			SetNextAt(now.Add(notifyClaim)).
			Save(ctx)
		if err != nil || claimed == 0 {
			done <- struct{}{}
			continue
		}
		go func() {
			defer func() { done <- struct{}{} }()
			b.sendOne(ctx, client, n, now)
		}()
	}
	for range rows {
		<-done
	}
}

// sendOne posts or emails n and records how it went.
func (b *Board) sendOne(ctx context.Context, client *http.Client, n *ent.Notification, now time.Time) {
	var err error
	where := []any{"webhook", redactURL(n.Target)}
	if addr, ok := emailTarget(n.Target); ok {
		where = []any{"smtp", b.mail.String(), "to", addr}
		err = b.sendEmail(ctx, addr, n.Body)
	} else {
		err = postWebhook(ctx, client, n.Target, n.Body)
	}
	if ctx.Err() != nil {
		return // closing: the claim lapses and it is sent again
	}
	bg := context.WithoutCancel(ctx)
	attempts := n.Attempts + 1
	u := b.db.Notification.UpdateOneID(n.ID).SetAttempts(attempts)
	if err == nil {
		u.SetSentAt(b.now().UTC())
	} else {
		wait := min(notifyLastRetry, notifyFirstRetry<<min(attempts-1, 20))
		u.SetLastError(cutText(err.Error(), 512)).SetNextAt(now.Add(wait))
		if attempts >= maxNotifyAttempts {
			u.SetFailed(true)
		}
		args := append([]any{"approval", n.ApprovalID}, where...)
		b.log.WarnContext(ctx, "a notification not delivered", append(args, "attempt", attempts, "err", err.Error())...)
	}
	if err := u.Exec(bg); err != nil {
		b.log.WarnContext(ctx, "record a notification", "err", err.Error())
		return
	}
	if err != nil && attempts >= maxNotifyAttempts {
		detail := map[string]any{"attempts": attempts, "event": n.Event, "error": cutText(err.Error(), 512)}
		for i := 0; i < len(where); i += 2 {
			detail[where[i].(string)] = where[i+1]
		}
		_ = b.audit.AppendNow(bg, audit.Record{Actor: "board", Action: "notify.failed", Subject: n.ApprovalID, Detail: detail})
	}
}

// postWebhook posts body to target, and wants a 2xx.
func postWebhook(ctx context.Context, client *http.Client, target string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err // without the URL, whose path may be a secret
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// redactURL is a webhook's URL as logs and the audit show it: scheme and
// host, never the path, which for most webhooks is the secret.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a webhook)"
	}
	return u.Scheme + "://" + u.Host + strings.Repeat("/…", min(1, len(u.Path)))
}

// sweepNotifications removes the rows sent or given up long ago.
func (b *Board) sweepNotifications(ctx context.Context, now time.Time) {
	if _, err := b.db.Notification.Delete().Where(notification.CreatedAtLT(now.Add(-notifyKeep)),
		notification.Or(notification.SentAtNotNil(), notification.Failed(true))).Exec(ctx); err != nil {
		b.log.WarnContext(ctx, "sweep old notifications", "err", err.Error())
	}
}
