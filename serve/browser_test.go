package serve_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/agent"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/serve"
	"github.com/symphonix/symphonix/transcript"
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
		chromedp.WaitEnabled(chromedp.ID("pair")),
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

// TestBrowserGoesOnWithTheLastConversation: the chat page draws the most
// recent conversation it may see, what was said in it out of the
// transcript, and the next message goes on in that conversation.
func TestBrowserGoesOnWithTheLastConversation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(chatFlow), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	tr := openTranscript(t)
	now := time.Now().UTC()
	tr.Write(t.Context(), transcript.Turn{At: now.Add(-time.Hour), Thread: "older", Asked: "an older question", Answered: "an older answer"})
	tr.Write(t.Context(), transcript.Turn{At: now.Add(-time.Minute), Thread: "recent", Asked: "the earlier question", Answered: "the earlier answer"})
	s, err := serve.New(t.Context(), serve.Config{Agent: a, Conversations: filepath.Join(t.TempDir(), "c.json"), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	b := browsertest.New(t)
	b.Do("open the page", chromedp.Navigate(ts.URL))
	b.Until("the last conversation drawn", `() => document.getElementById("thread-title").textContent === "recent" &&
		document.getElementById("log").textContent.includes("the earlier question") &&
		document.getElementById("log").textContent.includes("the earlier answer")`)
	if log := b.Eval(`document.getElementById("log").textContent`); strings.Contains(log, "older") {
		t.Errorf("the log holds the older conversation too: %q", log)
	}
	b.Do("send a message",
		chromedp.SetValue(chromedp.ID("field-0"), "and now?"),
		chromedp.WaitEnabled(chromedp.ID("send")),
		chromedp.Click(chromedp.ID("send")),
	)
	b.Until("the reply", `() => document.getElementById("log").textContent.includes("stand-in reply to")`)
	turns, err := tr.Thread("recent", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[1].Asked != "and now?" {
		t.Errorf("the thread recent holds %+v, want the message as its second turn", turns)
	}
	if older, _ := tr.Thread("older", 10); len(older) != 1 {
		t.Errorf("older holds %d turns, want 1: the message went on with the recent conversation", len(older))
	}
}

// TestBrowserSendsAPhoto: on the chat page of a flow whose input is a
// file, a person browses for a PNG; the page uploads it, the message
// carries its object, the run's model receives it, and the photo the run
// answers with is drawn as an image.
func TestBrowserSendsAPhoto(t *testing.T) {
	t.Parallel()
	a := openFlow(t, photoFlow, agent.Config{})
	ts := fileServer(t, a, false, nil)
	photo := filepath.Join(t.TempDir(), "cat.png")
	if err := os.WriteFile(photo, pngBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	b.Do("open the page", chromedp.Navigate(ts.URL))
	b.Until("the file control", `() => document.querySelector("#fields .drop input[type=file]") !== null &&
		!document.getElementById("send").disabled`)
	b.Do("browse for the photo", chromedp.SetUploadFiles(chromedp.ID("field-0"), []string{photo}))
	b.Until("the photo uploaded", `() => !!document.querySelector("#fields .drop").dataset.uploaded`)
	id := b.Eval(`document.querySelector("#fields .drop").dataset.uploaded`)
	if m, err := a.Files.Meta(id); err != nil || m.MediaType != "image/png" || m.Name != "cat.png" {
		t.Fatalf("the store holds %s as %+v, %v; want cat.png, image/png", id, m, err)
	}
	b.Do("send it",
		chromedp.WaitEnabled(chromedp.ID("send")),
		chromedp.Click(chromedp.ID("send")),
	)
	b.Until("the answer drawn as an image", `() => {
		const imgs = document.querySelectorAll("#log li.agent img.file");
		return imgs.length === 1 && imgs[0].complete && imgs[0].naturalWidth === 1 &&
			imgs[0].getAttribute("src") === "/files/`+id+`";
	}`)
	if log := b.Eval(`document.getElementById("log").textContent`); !strings.Contains(log, "received cat.png, image/png") {
		t.Errorf("the log = %q, want the model to have received cat.png, image/png", log)
	}
}

// TestBrowserAnswersWithAFile: a question that expects a file offers the
// file control rather than somewhere to type, and the file answers it.
func TestBrowserAnswersWithAFile(t *testing.T) {
	t.Parallel()
	ts := fileServer(t, openFlow(t, askPhotoFlow, agent.Config{}), false, nil)
	photo := filepath.Join(t.TempDir(), "tabby.png")
	if err := os.WriteFile(photo, pngBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	b.Do("send a topic",
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible(chromedp.ID("field-0")),
		chromedp.WaitEnabled(chromedp.ID("send")),
		chromedp.SetValue(chromedp.ID("field-0"), "cats"),
		chromedp.Click(chromedp.ID("send")),
	)
	b.Until("the question offering a file", `() => !document.getElementById("ask-form").hidden &&
		document.getElementById("ask-words").hidden && document.getElementById("ask-file-input") !== null &&
		document.getElementById("ask-file-input").accept === "image/*"`)
	b.Do("browse for the photo", chromedp.SetUploadFiles(chromedp.ID("ask-file-input"), []string{photo}))
	b.Until("the photo uploaded", `() => !!document.querySelector("#ask-file .drop").dataset.uploaded`)
	b.Do("answer", chromedp.Click(chromedp.ID("ask-send")))
	b.Until("the answer drawn as an image", `() => {
		const img = document.querySelector("#log li.agent img.file");
		return img !== null && img.complete && img.naturalWidth === 1 && document.getElementById("pending").hidden;
	}`)
	if log := b.Eval(`document.getElementById("log").textContent`); !strings.Contains(log, "received tabby.png, image/png") {
		t.Errorf("the log = %q, want the model to have received tabby.png", log)
	}
}

// TestBrowserFileChosenWhileBusy: a file chosen while the page is still
// busy with the answer that asked for it (here, its list of conversations
// held back) is uploaded once the page is free, not dropped.
func TestBrowserFileChosenWhileBusy(t *testing.T) {
	t.Parallel()
	s, err := serve.New(t.Context(), serve.Config{Agent: openFlow(t, askPhotoFlow, agent.Config{}), Conversations: filepath.Join(t.TempDir(), "c.json")})
	if err != nil {
		t.Fatal(err)
	}
	// Once the message is posted, the list of conversations the page asks
	// for next is held back until release.
	var hold atomic.Bool
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages") {
			hold.Store(true)
		}
		if r.Method == http.MethodGet && r.URL.Path == "/api/conversations" && hold.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	photo := filepath.Join(t.TempDir(), "tabby.png")
	if err := os.WriteFile(photo, pngBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	b.Do("open the page",
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible(chromedp.ID("field-0")),
		chromedp.WaitEnabled(chromedp.ID("send")),
	)
	b.Do("send a topic",
		chromedp.SetValue(chromedp.ID("field-0"), "cats"),
		chromedp.Click(chromedp.ID("send")),
	)
	b.Until("the question offering a file, the page still busy", `() => document.getElementById("ask-file-input") !== null &&
		document.getElementById("send").disabled`)
	b.Do("browse for the photo", chromedp.SetUploadFiles(chromedp.ID("ask-file-input"), []string{photo}))
	if got := b.Eval(`document.querySelector("#ask-file .drop").dataset.uploaded || ""`); got != "" {
		t.Fatalf("uploaded %q while the page was busy, want it to wait", got)
	}
	hold.Store(false)
	close(release)
	released = true
	b.Until("the photo uploaded", `() => !!document.querySelector("#ask-file .drop").dataset.uploaded`)
}

// TestBrowserCardShowsAmounts: the chat page's approval card lists the
// amounts the agent read out of the question, each as written and as a
// value with its currency.
func TestBrowserCardShowsAmounts(t *testing.T) {
	t.Parallel()
	a, _ := openDesk(t, journal.DetailMetadata)
	ts := newServer(t, a)
	b := browsertest.New(t)
	b.Do("ask for a refund",
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible(chromedp.ID("field-1")),
		chromedp.SetValue(chromedp.ID("field-0"), "A-1001"),
		chromedp.SetValue(chromedp.ID("field-1"), "The mug arrived broken; I want my money back."),
		chromedp.WaitEnabled(chromedp.ID("send")),
		chromedp.Click(chromedp.ID("send")),
	)
	b.Until("the card with its amounts", `() => !document.getElementById("pending-amounts").hidden`)
	if got := b.Eval(`document.getElementById("pending-amounts").textContent`); got != "49.9 EUR" {
		t.Errorf("the card's amounts = %q, want 49.9 EUR (and not the order's number, A-1001)", got)
	}
}
