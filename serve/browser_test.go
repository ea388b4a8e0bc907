package serve_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// chromium finds Chromium or Chrome. Without one the test is skipped,
// except in CI, where a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium, chromium-browser or google-chrome on PATH; CI must have one (apt-get install chromium)")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH (outside CI)")
	return ""
}

// TestBrowserPairs: on the chat page of an agent served with a board, a
// person clicks "Who are you?", enters the code the page shows on the
// board, and the page says who they are, without a reload.
func TestBrowserPairs(t *testing.T) {
	t.Parallel()
	exe := chromium(t)
	bt := boardtest.Start(t, boardtest.Options{})
	d := newDoorServer(t, doorOptions{link: bt})
	const password = "a long enough password"
	bt.AddUser("dot@example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("dot@example.com", password)
	dot := boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, csrf))

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.ts.URL),
		chromedp.WaitVisible(chromedp.ID("pair")),
		chromedp.Click(chromedp.ID("pair")),
		chromedp.WaitVisible(chromedp.ID("pair-code")),
	); err != nil {
		t.Fatalf("asking for a code: %v", err)
	}
	code, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("pair-code-value").textContent`))
	if err != nil || len(code) != 8 {
		t.Fatalf("the code on the page = %q (%v), want 8 symbols", code, err)
	}
	if _, err := dot.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: code}); err != nil {
		t.Fatalf("EnterPairingCode: %v", err)
	}
	_, err = chromedp.Run(ctx, chromedp.PollFunction[bool](
		`() => !document.getElementById("who-you").hidden && document.getElementById("who-people").textContent.includes("dot@example.com (paired)")`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("the page saying who is in: %v", err)
	}
	you, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("who-you").textContent`))
	if err != nil || !strings.Contains(you, "dot@example.com") {
		t.Errorf("who-you = %q (%v), want dot@example.com", you, err)
	}
}
