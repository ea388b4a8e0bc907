package board_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// receiver is a webhook's receiving end: it answers each post with the
// next of its codes (200 once they run out) and keeps what it was posted.
type receiver struct {
	mu    sync.Mutex
	codes []int
	hang  bool
	got   []map[string]any
	posts int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.posts++
	code := http.StatusOK
	if len(r.codes) > 0 {
		code, r.codes = r.codes[0], r.codes[1:]
	}
	hang := r.hang
	if code == http.StatusOK && !hang {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		r.got = append(r.got, m)
	}
	r.mu.Unlock()
	if hang {
		select {
		case <-req.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	w.WriteHeader(code)
}

func (r *receiver) received() ([]map[string]any, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.got...), r.posts
}

// TestWebhookNotifications: an approval raised under a rule is posted to
// each webhook, with what the card shows: the ask, the shown values exactly
// as the agent sent them, the digest's start and the rule; a webhook that
// answers 500 is tried again until it takes it, once; one that hangs
// holds up no raise.
func TestWebhookNotifications(t *testing.T) {
	t.Parallel()
	good := &receiver{}
	flaky := &receiver{codes: []int{500, 500}}
	stuck := &receiver{hang: true}
	urls := []string{}
	for _, r := range []*receiver{good, flaky, stuck} {
		s := httptest.NewServer(r)
		t.Cleanup(s.Close)
		urls = append(urls, s.URL+"/hooks/secret-path")
	}
	bt, _ := decideBoard(t, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		boardtest.Options{NotifyWebhooks: urls})
	l := openLink(t, bt, "desk")
	start := time.Now()
	raised := l.raised(refund("run-1", 1))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the raise took %v with a webhook hanging, want it answered at once", took)
	}
	var got []map[string]any
	boardtest.Eventually(t, within, "the good webhook told", func() bool { got, _ = good.received(); return len(got) == 1 })
	text, _ := got[0]["text"].(string)
	a, _ := got[0]["approval"].(map[string]any)
	show, _ := json.Marshal(a["show"])
	page := bt.URL + "/#approval/" + raised.GetApprovalId()
	for _, want := range []string{raised.GetApprovalId(), "Refund 5,000?", "agent desk", "rule refunds", digestOf(1)[:len("sha256:")+12], "Open it: " + page} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q: %q missing", text, want)
		}
	}
	if got[0]["content"] != text || a["id"] != raised.GetApprovalId() || a["digest"] != digestOf(1) || a["rule"] != "refunds" ||
		string(show) != `{"amount":5000,"currency":"EUR","to":{"name":"Ann"}}` || got[0]["event"] != "raised" || a["url"] != page {
		t.Errorf("posted %v, want the card's facts, shown as sent", got[0])
	}
	boardtest.Eventually(t, 20*time.Second, "the flaky webhook told, on its third try", func() bool {
		g, posts := flaky.received()
		return len(g) == 1 && posts == 3
	})
	time.Sleep(1500 * time.Millisecond)
	if g, posts := good.received(); len(g) != 1 || posts != 1 {
		t.Errorf("the good webhook was posted %d times, want once", posts)
	}
	if g, posts := flaky.received(); len(g) != 1 || posts != 3 {
		t.Errorf("the flaky webhook: %d posts, %d taken; want 3 and 1", posts, len(g))
	}
}
