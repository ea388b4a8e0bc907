package ui_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/node"
)

// parrot is a conversation with the stand-in model: it answers whatever it
// is asked, and remembers what was said.
const parrot = `{
  "version": "0.17", "name": "parrot", "description": "Answers, remembering what was said.",
  "conversation": true, "inputs": ["question"], "outputs": ["answer"],
  "state": {
    "question": { "type": "string", "description": "What is asked." },
    "answer": { "type": "string", "description": "The answer." }
  },
  "start": "answer",
  "nodes": [{ "id": "answer", "type": "llm", "output": "answer", "prompt": "Answer: {{question}}" }],
  "edges": [{ "from": "answer", "to": "END" }]
}`

// TestBrowserChatWindow: a person signed in to the board talks to a real
// served agent through the chat window on its page and sees the reply;
// after a reload the conversation is drawn again, out of the agent's
// transcript.
func TestBrowserChatWindow(t *testing.T) {
	bt := linkBoard(t)
	dir := filepath.Join(t.TempDir(), "parrot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(parrot), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- node.Serve(ctx, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("parrot")})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	const password = "a long enough password"
	addPerson(t, bt, "ann@example.com", "Ann", identity.RoleViewer, password)

	b := browsertest.New(t)
	signInWithPassword(t, b, bt, "ann@example.com", password)
	open(t, b, "agents")
	openAgentPage(t, b, "parrot")
	b.Until("the chat window", `() => !document.getElementById("chat").hidden && document.getElementById("chat-text") !== null`)
	b.Do("say hello", chromedp.SetValue(chromedp.ID("chat-text"), "hello parrot"), chromedp.Click(chromedp.ID("chat-send")))
	b.Until("the reply", `() => document.querySelectorAll("#chat-log li.answered").length === 1`)
	reply := b.Eval(`document.querySelector("#chat-log li.answered").textContent`)
	if reply == "" {
		t.Fatal("the reply is empty")
	}

	b.Eval(`window.before = "reload"; "set"`)
	b.Do("reload", chromedp.Navigate(bt.URL))
	b.UntilText("still signed in", "#who", "signed in as ")
	if got := b.Eval(`window.before || "reloaded"`); got != "reloaded" {
		t.Fatalf("page: %s, want a new document", got)
	}
	open(t, b, "agents")
	openAgentPage(t, b, "parrot")
	b.Until("the chat window after the reload", `() => !document.getElementById("chat").hidden`)
	b.Until("the conversation drawn again", `() => {
		const asked = document.querySelector("#chat-log li.asked");
		const answered = document.querySelector("#chat-log li.answered");
		return asked !== null && asked.textContent.includes("hello parrot") &&
			asked.textContent.includes("ann@example.com") && answered !== null;
	}`)
	if got := b.Eval(`document.querySelector("#chat-log li.answered").textContent`); got != reply {
		t.Errorf("after the reload the reply reads %q, want %q", got, reply)
	}
}
