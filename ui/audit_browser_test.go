package ui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// auditSeqs is the seqs of the audit view's rows, in order, as
// JavaScript.
const auditSeqs = `Array.from(document.querySelectorAll("#audit-rows tr")).map((r) => r.dataset.seq).join(",")`

// listedSeqs is the seqs ListAudit gives for req, newest first, every page.
func listedSeqs(t *testing.T, c boardv1connect.AuditServiceClient, req *boardv1.ListAuditRequest) []string {
	t.Helper()
	req.NewestFirst = true
	req.PageSize = 1000
	var out []string
	for {
		res, err := c.ListAudit(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.GetEntries() {
			out = append(out, fmt.Sprint(e.GetSeq()))
		}
		if res.GetNextPageToken() == "" {
			return out
		}
		req.PageToken = res.GetNextPageToken()
	}
}

// TestBrowserAudit: an admin reads the audit log newest first, a page at a
// time; filters narrow it, are kept in the address and survive a reload;
// an entry's object opens its page; the chain verifies intact, and broken
// at the entry changed in the store; and the export holds exactly the
// filtered entries as JSON lines.
func TestBrowserAudit(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.OperatorToken("ops", identity.RoleAdmin)
	desk := openRawLink(t, bt, "desk-a")
	approvalID := desk.raise("run-1", "pay", "Pay 5,000?")
	rules := boardv1connect.NewApprovalServiceClient(bt.Client(admin))
	if _, err := rules.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{
		Id: "keep-wire", Agent: "desk-a", Node: "wire", Role: boardv1.Role_ROLE_APPROVER,
	}}); err != nil {
		t.Fatal(err)
	}
	log := audit.New(bt.Store)
	for i := range 60 {
		if err := log.AppendNow(t.Context(), audit.Record{Actor: "batch", Action: "bulk.note", Subject: fmt.Sprintf("n-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	api := boardv1connect.NewAuditServiceClient(bt.Client(admin))
	all := listedSeqs(t, api, &boardv1.ListAuditRequest{})
	if len(all) < 63 {
		t.Fatalf("the log holds %d entries, want the mint, the raise, the rule and 60 notes", len(all))
	}

	b := browsertest.New(t)
	signInTo(t, b, bt, admin, "audit")
	// Newest first, a page of 50; More reads the next.
	b.Until("the first page, newest first", `(want) => `+auditSeqs+` === want && !document.getElementById("audit-more").hidden`,
		strings.Join(all[:50], ","))
	b.Click("more", "#audit-more")
	b.Until("the second page after it", `(want) => `+auditSeqs+` === want`, strings.Join(all[:min(100, len(all))], ","))

	// A filter narrows the list and goes into the address.
	b.Do("filter by agent and kind",
		chromedp.SetValue(chromedp.ID("audit-actor"), "desk-a"),
		chromedp.SetValue(chromedp.ID("audit-kind"), "approval."),
	)
	b.Click("show", "#audit-apply")
	raised := listedSeqs(t, api, &boardv1.ListAuditRequest{Actor: "desk-a", Action: "approval."})
	if len(raised) != 1 {
		t.Fatalf("ListAudit(desk-a, approval.) = %v, want the raise", raised)
	}
	filtered := `(want) => location.hash === "#audit?actor=desk-a&kind=approval." && ` + auditSeqs + ` === want &&
		document.getElementById("audit-more").hidden`
	b.Until("only desk-a's raise", filtered, raised[0])

	// A reload of the address shows the same entries, and the form holds
	// the filters.
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("audit-rows")))
	b.Until("the same entries after a reload", filtered+` && document.getElementById("audit-actor").value === "desk-a" &&
		document.getElementById("audit-kind").value === "approval."`, raised[0])

	// The export holds the filtered entries as JSON lines, as ListAudit
	// gives them.
	dir := t.TempDir()
	browsertest.Run(b, "allow downloads", func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tgt, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
		})
		return chromedp.Void{}, err
	})
	b.Click("export", "#audit-export")
	b.UntilText("the export said", "#audit-export-status", "Exported 1 entry to audit.jsonl.")
	exported := readLines(t, filepath.Join(dir, "audit.jsonl"))
	var seqs []string
	for _, line := range exported {
		var e struct {
			Seq     string `json:"seq"`
			Actor   string `json:"actor"`
			Action  string `json:"action"`
			Subject string `json:"subject"`
			Hash    string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if e.Actor != "desk-a" || e.Action != "approval.raise" || e.Subject != approvalID || !strings.HasPrefix(e.Hash, "sha256:") {
			t.Errorf("export line = %+v, want desk-a's approval.raise of %s with its hash", e, approvalID)
		}
		seqs = append(seqs, e.Seq)
	}
	if d := cmp.Diff(raised, seqs); d != "" {
		t.Errorf("exported seqs (-want +got):\n%s", d)
	}

	// The approval's entry opens the approval.
	b.Click("the approval's link", `#audit-rows tr[data-action="approval.raise"] a.subject-link`)
	b.Until("the approval picked out", `(id) => location.hash === "#approval/" + id && !document.getElementById("approvals").hidden &&
		document.getElementById("audit").hidden`, approvalID)
	// Back to the log, and a rule's entry opens the rule.
	b.Eval(`history.back(), ""`)
	b.Until("back on the filtered log", filtered, raised[0])
	b.Click("clear the filters", "#audit-clear")
	b.Until("every entry again", `() => location.hash === "#audit" && document.getElementById("audit-actor").value === "" &&
		document.querySelectorAll("#audit-rows tr").length === 50`)
	b.Do("filter by the rule", chromedp.SetValue(chromedp.ID("audit-kind"), "rule.put"),
		chromedp.SetValue(chromedp.ID("audit-object"), "keep-wire"))
	b.Click("show", "#audit-apply")
	b.Until("the rule's entry", `() => location.hash === "#audit?kind=rule.put&object=keep-wire" &&
		document.querySelectorAll("#audit-rows tr").length === 1`)
	b.Click("the rule's link", `#audit-rows tr[data-action="rule.put"] a.subject-link`)
	b.Until("the rule open", `() => location.hash === "#rules/keep-wire" && !document.getElementById("rule-detail").hidden &&
		document.getElementById("rule-agent").value === "desk-a"`)

	// Verify: intact, then broken where the store was changed.
	b.Do("open the log", chromedp.Navigate(bt.URL+"/#audit"), chromedp.WaitVisible(chromedp.ID("audit-rows")))
	b.Until("the verify button", `() => !document.getElementById("audit-verify").hidden`)
	b.Click("verify", "#audit-verify")
	b.Until("intact", `() => { const r = document.getElementById("audit-verify-result");
		return r.dataset.ok === "true" && r.textContent.startsWith("Chain intact: "); }`)
	n, err := bt.Store.AuditEntry.Update().Where(auditentry.Seq(2)).SetHash("sha256:" + strings.Repeat("0", 64)).Save(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("tamper with entry 2: %d, %v", n, err)
	}
	b.Click("verify again", "#audit-verify")
	b.Until("broken at entry 2", `() => { const r = document.getElementById("audit-verify-result");
		return r.dataset.ok === "false" && r.textContent === "Chain broken at entry 2: hash does not match its contents. The 1 entry before it is good."; }`)
	// Shown, the broken entry is marked.
	second, err := api.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: 1, PageSize: 1})
	if err != nil || len(second.GetEntries()) != 1 {
		t.Fatalf("ListAudit(after 1) = %v, %v", second, err)
	}
	b.Do("open entry 2's actor's entries", chromedp.Navigate(bt.URL+"/#audit?actor="+url.QueryEscape(second.GetEntries()[0].GetActor())),
		chromedp.WaitVisible(chromedp.ID("audit-rows")))
	b.Until("entry 2 listed", `() => document.querySelector('#audit-rows tr[data-seq="2"]') !== null`)
	b.Click("verify once more", "#audit-verify")
	b.Until("entry 2 marked", `() => document.querySelector('#audit-rows tr[data-seq="2"]').dataset.bad === "true" &&
		document.querySelectorAll('#audit-rows tr[data-bad="true"]').length === 1`)
}

// TestBrowserAuditForAdmins: the tab is shown only to admins, as only
// they may read the log; a viewer opening its address sees the agents.
func TestBrowserAuditForAdmins(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	b := browsertest.New(t)
	b.Do("sign in as a viewer at the audit address",
		chromedp.Navigate(bt.URL+"/#audit?actor=ops"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), bt.OperatorToken("vic", identity.RoleViewer)),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("agents")),
	)
	if got := b.Eval(`String(document.getElementById("tab-audit").hidden) + " " + String(document.getElementById("audit").hidden)`); got != "true true" {
		t.Errorf("a viewer's audit tab and view hidden = %s, want true true", got)
	}
}

// readLines waits for the file at path to be written whole, and returns
// its lines.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	var data []byte
	boardtest.Eventually(t, 10*time.Second, "the download "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			return false
		}
		data = b
		return true
	})
	var out []string
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

// TestBrowserAuditTimeRange: a time range in the address fills the form
// and picks the entries written within it; a filter the board refuses is
// shown on its field.
func TestBrowserAuditTimeRange(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.OperatorToken("ops", identity.RoleAdmin)
	t0 := time.Date(2021, 6, 1, 12, 0, 0, 0, time.UTC)
	log := audit.New(bt.Store)
	for i, subject := range []string{"early", "middle", "late"} {
		if err := log.AppendNow(t.Context(), audit.Record{Actor: "clock", Action: "time.note", Subject: subject, At: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	b := browsertest.New(t)
	signInTo(t, b, bt, admin, "audit")
	since, until := t0.Add(30*time.Minute).Format(time.RFC3339), t0.Add(90*time.Minute).Format(time.RFC3339)
	b.Do("open a time range", chromedp.Navigate(bt.URL+"/#audit?since="+since+"&until="+until))
	b.Until("only the middle entry, the form filled", `() => {
		const rows = Array.from(document.querySelectorAll("#audit-rows tr .subject")).map((c) => c.textContent);
		const s = new Date(document.getElementById("audit-since").value), u = new Date(document.getElementById("audit-until").value);
		return rows.join(",") === "middle" && s.toISOString() === "2021-06-01T12:30:00.000Z" && u.toISOString() === "2021-06-01T13:30:00.000Z";
	}`)

	// Until before since: the board's refusal on the until field.
	b.Do("open a range backwards", chromedp.Navigate(bt.URL+"/#audit?since="+until+"&until="+since))
	b.Until("the error on until", `() => document.getElementById("audit-until").getAttribute("aria-invalid") === "true" &&
		document.getElementById("audit-until-error").textContent.startsWith("until: ") &&
		document.getElementById("audit-since").getAttribute("aria-invalid") === null`)
	b.Click("clear the filters", "#audit-clear")
	b.Until("cleared", `() => location.hash === "#audit" && document.getElementById("audit-until").getAttribute("aria-invalid") === null`)
	b.Do("a kind the board refuses", chromedp.SetValue(chromedp.ID("audit-kind"), "Time.Note"))
	b.Click("show", "#audit-apply")
	b.Until("the error on kind", `() => document.getElementById("audit-kind").getAttribute("aria-invalid") === "true" &&
		document.getElementById("audit-kind-error").textContent.startsWith("action: ")`)
}
