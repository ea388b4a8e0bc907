package browsertest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/internal/browsertest"
)

func TestTab(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>a page</title><body></body>")
	}))
	t.Cleanup(srv.Close)
	b := browsertest.New(t)
	b.Do("open a page", chromedp.Navigate(srv.URL))

	// Quote gives back, in the page, the very string it was given.
	for _, s := range []string{``, `plain`, `"double" 'single' ` + "`back`", `\ \\ \n`, "line\nbreak\r\ttab", "\u2028\u2029", `</script><img src=x>`, "é ✓ 𝄞", "nul\x00"} {
		if got := b.Eval(`String(` + browsertest.Quote(s) + `)`); got != s {
			t.Errorf("Quote(%q) read in the page as %q", s, got)
		}
	}

	// Until returns once the page has done what it waits for, and not
	// before.
	b.Eval(`setTimeout(() => { document.body.dataset.done = "yes"; }, 50); "set"`)
	b.Until("the page done", `(want) => document.body.dataset.done === want`, "yes")
	if got := b.Eval(`document.body.dataset.done || ""`); got != "yes" {
		t.Errorf("after Until: done = %q, want yes", got)
	}

	b.Eval(`setTimeout(() => { document.body.textContent = "all is well"; }, 50); "set"`)
	b.UntilText("the text shown", "body", "is well")
	if got := b.Eval(`document.body.textContent`); got != "all is well" {
		t.Errorf("after UntilText: body = %q, want all is well", got)
	}

	// Fetches are recorded when they start, in this page and after a
	// reload.
	b.RecordFetches()
	b.Eval(`fetch("/one?x=1").catch(() => {}); fetch(new Request("/two")).catch(() => {}); "started"`)
	if got := strings.Join(b.Fetched(), ","); got != "/one,/two" {
		t.Errorf("Fetched() = %s, want /one,/two", got)
	}
	b.Do("reload", chromedp.Reload())
	if got := len(b.Fetched()); got != 0 {
		t.Errorf("after a reload, Fetched() has %d, want none", got)
	}
	b.Eval(`fetch("/three").catch(() => {}); "started"`)
	if got := strings.Join(b.Fetched(), ","); got != "/three" {
		t.Errorf("after a reload, Fetched() = %s, want /three", got)
	}
}
