// Package browsertest runs a headless Chromium for tests of the pages the
// board and a served agent show, driven through chromedp.
//
// Every wait is for something the page does: a predicate that becomes
// true, an element that shows. None guesses how long the page needs. The
// ceiling on a wait only bounds a failure, so it is generous: a loaded CI
// machine running several browsers and boards at once must not fail a
// test that passes alone.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Ceiling bounds each step a test takes in the browser: one Do, Run or
// Until. A step that succeeds returns as soon as it has.
const Ceiling = 45 * time.Second

// limit bounds everything a test does in one browser, starting it
// included.
const limit = 5 * time.Minute

// browsers are the names Chromium and Chrome go by on PATH.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// chromium finds Chromium or Chrome on PATH. Without one it skips the
// test, except when CI=true, where a missing browser fails it: CI must run
// every browser test.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range browsers {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("none of %v on PATH; CI must have one (apt-get install chromium)", browsers)
	}
	t.Skipf("none of %v on PATH (outside CI): install one (apt-get install chromium) to run the browser tests", browsers)
	return ""
}

// Tab is a page in a headless Chromium of its own, started for one test.
// Its methods fail the test when a step fails.
type Tab struct {
	t   testing.TB
	ctx context.Context
}

// New starts Chromium for t, with a user data folder of the test's own,
// and returns its tab. The browser stops when the test ends.
func New(t testing.TB) *Tab {
	t.Helper()
	exe := chromium(t)
	parent, cancelAll := context.WithTimeout(t.Context(), limit)
	t.Cleanup(cancelAll)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	t.Cleanup(cancelAlloc) // waits for the browser to exit, before the TempDir goes
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	// The first call starts the browser, on the tab's own context: a
	// timeout on it would stop the browser. Each step after it has a
	// ceiling of its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return &Tab{t: t, ctx: ctx}
}

// Do runs steps in order within Ceiling, failing the test with what when
// one fails.
func (b *Tab) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	Run(b, what, chromedp.Steps(steps...))
}

// Run runs a within Ceiling and returns its value, failing the test with
// what when it fails.
func Run[T any](b *Tab, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Ceiling)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if errors.Is(err, context.DeadlineExceeded) && b.ctx.Err() == nil {
		b.t.Fatalf("%s: not done within %s", what, Ceiling)
	}
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// Eval evaluates a JavaScript expression whose value is a string.
func (b *Tab) Eval(expr string) string {
	b.t.Helper()
	return Run(b, "evaluate "+expr, chromedp.Evaluate[string](expr))
}

// Until waits until predicate, a JavaScript function of args, returns
// true, and fails the test with what when it has not within Ceiling. The
// page checks the predicate every few milliseconds, so the wait ends as
// soon as the page has done what it waits for.
func (b *Tab) Until(what, predicate string, args ...any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Ceiling+5*time.Second) // the page's own timeout ends it first
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.PollFunction[bool](predicate,
		chromedp.WithPollingInterval(10*time.Millisecond),
		chromedp.WithPollingTimeout(Ceiling),
		chromedp.WithPollingArgs(args...)))
	if errors.Is(err, chromedp.ErrPollingTimeout) || errors.Is(err, context.DeadlineExceeded) && b.ctx.Err() == nil {
		b.t.Fatalf("%s: not within %s", what, Ceiling)
	}
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// Click clicks the element the CSS selector sel finds, once it is there,
// finding and clicking it in one step inside the page: an element of a list
// the page draws again (a watch's update) may be replaced between a lookup
// and a click made from outside, which chromedp.Click then fails to find.
func (b *Tab) Click(what, sel string) {
	b.t.Helper()
	b.Until(what, `(sel) => {
		const e = document.querySelector(sel);
		if (e === null) return false;
		e.click();
		return true;
	}`, sel)
}

// UntilText waits until the element that the CSS selector sel finds
// shows text containing want.
func (b *Tab) UntilText(what, sel, want string) {
	b.t.Helper()
	b.Until(what, `(sel, want) => {
		const e = document.querySelector(sel);
		return e !== null && e.textContent.includes(want);
	}`, sel, want)
}

// recordFetches has the page record in window.fetched the path of each
// fetch it starts, when it starts it.
const recordFetches = `(() => {
	if (window.fetched !== undefined) return;
	window.fetched = [];
	const fetch = window.fetch;
	window.fetch = function (input, init) {
		const url = input instanceof Request ? input.url : String(input);
		window.fetched.push(new URL(url, location.href).pathname);
		return fetch.apply(this, arguments);
	};
})();`

// RecordFetches has the page, and every page the tab loads after it,
// record each fetch it starts at the moment it starts it: see Fetched.
// A test can then tell that the page asked nothing, without waiting to
// see whether an answer comes.
func (b *Tab) RecordFetches() {
	b.t.Helper()
	Run(b, "record the fetches of every page", func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tgt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordFetches})
		return chromedp.Void{}, err
	})
	b.Eval(recordFetches + ` "recording"`)
}

// Fetched is the paths the page has fetched, in the order it started
// them, since it loaded or since RecordFetches.
func (b *Tab) Fetched() []string {
	b.t.Helper()
	return Run(b, "read the fetches", chromedp.Evaluate[[]string](`window.fetched || []`))
}

// Quote quotes s as a JavaScript string literal, for building
// expressions.
func Quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}
