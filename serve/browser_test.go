package serve_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// TestBrowserPairs: on the chat page of an agent served with a board, a
// person clicks "Who are you?", enters the code the page shows on the
// board, and the page says who they are, without a reload.
func TestBrowserPairs(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	d := newDoorServer(t, doorOptions{link: bt})
	const password = "a long enough password"
	bt.AddUser("dot@example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("dot@example.com", password)
	dot := boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, csrf))

	b := browsertest.New(t)
	b.Do("ask for a code",
		chromedp.Navigate(d.ts.URL),
		chromedp.WaitVisible(chromedp.ID("pair")),
		chromedp.Click(chromedp.ID("pair")),
		chromedp.WaitVisible(chromedp.ID("pair-code")),
	)
	code := b.Eval(`document.getElementById("pair-code-value").textContent`)
	if len(code) != 8 {
		t.Fatalf("the code on the page = %q, want 8 symbols", code)
	}
	if _, err := dot.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: code}); err != nil {
		t.Fatalf("EnterPairingCode: %v", err)
	}
	b.Until("the page saying who is in", `() => !document.getElementById("who-you").hidden &&
		document.getElementById("who-people").textContent.includes("dot@example.com (paired)")`)
	if you := b.Eval(`document.getElementById("who-you").textContent`); !strings.Contains(you, "dot@example.com") {
		t.Errorf("who-you = %q, want dot@example.com", you)
	}
}
