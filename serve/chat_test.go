package serve_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/serve"
)

// askFlow is a conversation that asks who is asking before it answers.
const askFlow = `{
  "version": "0.17", "name": "asker", "description": "Asks who you are, then answers.",
  "conversation": true, "inputs": ["question"], "outputs": ["answer"],
  "requires": {"env": ["ASKER_TOKEN"]},
  "state": {
    "question": {"type": "string", "description": "What is asked now."},
    "name": {"type": "string", "description": "Who asks."},
    "answer": {"type": "string", "description": "The reply."}
  },
  "start": "who",
  "nodes": [
    {"id": "who", "type": "ask", "ask": "Who is asking about {{question}}?", "output": "name"},
    {"id": "reply", "type": "llm", "output": "answer", "prompt": "Answer {{name}}: {{question}}"}
  ],
  "edges": [{"from": "who", "to": "reply"}, {"from": "reply", "to": "END"}]
}`

// newAskServer serves askFlow, from a folder of its own, with the door on
// and a transcript.
func newAskServer(t *testing.T) *serve.Server {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(askFlow), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s, err := serve.New(t.Context(), serve.Config{
		Agent: a, Conversations: filepath.Join(t.TempDir(), "c.json"), Transcript: openTranscript(t), Monitored: true,
		About: serve.AboutConfig{Build: "sha256:abc", Env: []string{"OPENAI_API_KEY", "ASKER_TOKEN"}, Model: "stand-in"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refusal is err as a *serve.ChatError; it fails the test when err is not
// one.
func refusal(t *testing.T, what string, err error) *serve.ChatError {
	t.Helper()
	var ce *serve.ChatError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: err = %v, want a *serve.ChatError", what, err)
	}
	return ce
}

func threadsOf(list []serve.Conversation) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.Thread)
	}
	return out
}

// TestBoardTalk: a person talking through the board gets a new thread of
// their own, named as the chat page names one; the run's question comes
// back as pending, and their answer finishes the turn, which the
// transcript keeps with who asked. Another person is refused that thread
// exactly as one that does not exist; an admin sees and continues it.
func TestBoardTalk(t *testing.T) {
	t.Parallel()
	s := newAskServer(t)
	ann := serve.BoardCaller{Who: "ann@example.com"}
	bob := serve.BoardCaller{Who: "bob@example.com"}
	admin := serve.BoardCaller{Who: "ops", All: true}

	first, err := s.BoardTalk(t.Context(), ann, serve.Talk{Text: "the weather"})
	if err != nil {
		t.Fatal(err)
	}
	th := first.Thread
	if !strings.HasPrefix(th, "chat-") || first.Pending == nil || first.Pending.Kind != flow.PendingAsk ||
		first.Pending.Question != "Who is asking about the weather?" || first.Run == "" {
		t.Fatalf("first turn = %+v, want a new chat- thread waiting at the question, with its run", first)
	}
	// A new message while the run waits is refused.
	_, err = s.BoardTalk(t.Context(), ann, serve.Talk{Thread: th, Text: "again"})
	if ce := refusal(t, "a message to a waiting thread", err); ce.Code != serve.ChatFailedPrecondition || !strings.Contains(ce.Message, "waits for an answer") {
		t.Errorf("a message to a waiting thread = %+v, want failed_precondition: waits for an answer", ce)
	}

	// Bob: not his thread, exactly like one that does not exist.
	_, err = s.BoardConversation(t.Context(), bob, "no-such-thread")
	missing := refusal(t, "a thread that does not exist", err)
	if missing.Code != serve.ChatNotFound || !strings.HasPrefix(missing.Message, "thread:") {
		t.Fatalf("a missing thread = %+v, want not_found naming thread", missing)
	}
	for name, try := range map[string]func() error{
		"conversation": func() error { _, err := s.BoardConversation(t.Context(), bob, th); return err },
		"answer": func() error {
			_, err := s.BoardTalk(t.Context(), bob, serve.Talk{Thread: th, Answer: "Bob", Answering: true})
			return err
		},
		"message": func() error { _, err := s.BoardTalk(t.Context(), bob, serve.Talk{Thread: th, Text: "hi"}); return err },
	} {
		if ce := refusal(t, "bob's "+name, try()); *ce != *missing {
			t.Errorf("bob's %s on ann's thread = %+v, want %+v as for a missing one", name, ce, missing)
		}
	}

	done, err := s.BoardTalk(t.Context(), ann, serve.Talk{Thread: th, Answer: "Ann", Answering: true})
	if err != nil {
		t.Fatal(err)
	}
	if done.Thread != th || done.Pending != nil || done.Reply == "" || done.State != nil || done.Run != first.Run {
		t.Fatalf("answered turn = %+v, want the reply on %s, the same run, no state", done, th)
	}
	_, err = s.BoardTalk(t.Context(), ann, serve.Talk{Thread: th, Answer: "again", Answering: true})
	if ce := refusal(t, "an answer to nothing", err); ce.Code != serve.ChatFailedPrecondition || !strings.HasPrefix(ce.Message, "answer:") {
		t.Errorf("an answer to a thread that waits for nothing = %+v, want failed_precondition naming answer", ce)
	}

	c, err := s.BoardConversation(t.Context(), ann, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 1 || c.Turns[0].Who != "ann@example.com" || c.Turns[0].Asked == nil || c.Pending != nil {
		t.Errorf("ann's conversation = %+v, want one turn she asked, nothing pending", c)
	}

	bobs, err := s.BoardTalk(t.Context(), bob, serve.Talk{Text: "the sea"})
	if err != nil {
		t.Fatal(err)
	}
	list := func(bc serve.BoardCaller) []string {
		t.Helper()
		l, err := s.BoardConversations(t.Context(), bc)
		if err != nil {
			t.Fatal(err)
		}
		return threadsOf(l)
	}
	if got := list(ann); !slices.Equal(got, []string{th}) {
		t.Errorf("ann's conversations = %v, want only %s", got, th)
	}
	if got := list(bob); !slices.Equal(got, []string{bobs.Thread}) {
		t.Errorf("bob's conversations = %v, want only %s", got, bobs.Thread)
	}
	if got := list(admin); !slices.Equal(got, []string{bobs.Thread, th}) {
		t.Errorf("the admin's conversations = %v, want both, newest first", got)
	}
	l, _ := s.BoardConversations(t.Context(), ann)
	if l[0].Turns != 1 || l[0].Waiting {
		t.Errorf("ann's pointer = %+v, want 1 turn, not waiting", l[0])
	}

	// The admin reads and answers bob's thread.
	bc, err := s.BoardConversation(t.Context(), admin, bobs.Thread)
	if err != nil || bc.Pending == nil || bc.Pending.Node != "who" {
		t.Fatalf("the admin reading bob's thread = %+v, %v; want it waiting at who", bc, err)
	}
	if turn, err := s.BoardTalk(t.Context(), admin, serve.Talk{Thread: bobs.Thread, Answer: "Bob", Answering: true}); err != nil || turn.Reply == "" {
		t.Errorf("the admin answering bob's thread = %+v, %v; want the reply", turn, err)
	}
	if got := list(bob); !slices.Equal(got, []string{bobs.Thread}) {
		t.Errorf("bob's conversations after the admin answered = %v, want his still", got)
	}
}

// TestBoardTalkRefusals: what the agent checks is refused with a code and
// the field: an input the flow does not declare, two kinds of message in
// one, a thread name it cannot hold, and nobody asking.
func TestBoardTalkRefusals(t *testing.T) {
	t.Parallel()
	s := newAskServer(t)
	ann := serve.BoardCaller{Who: "ann@example.com"}
	for _, tc := range []struct {
		name  string
		bc    serve.BoardCaller
		talk  serve.Talk
		field string
	}{
		{"an input not declared", ann, serve.Talk{Input: map[string]any{"nope": 1.0}}, "input.nope"},
		{"an input of the wrong type", ann, serve.Talk{Input: map[string]any{"question": 1.0}}, "input.question"},
		{"two kinds", ann, serve.Talk{Text: "hi", Input: map[string]any{"question": "hi"}}, "text, input, answer"},
		{"none", ann, serve.Talk{Thread: "t"}, "text, input, answer"},
		{"a bad thread", ann, serve.Talk{Thread: "a/b", Text: "hi"}, "thread"},
		{"an answer without a thread", ann, serve.Talk{Answer: "x", Answering: true}, "thread"},
		{"nobody", serve.BoardCaller{}, serve.Talk{Text: "hi"}, "who"},
	} {
		_, err := s.BoardTalk(t.Context(), tc.bc, tc.talk)
		if ce := refusal(t, tc.name, err); ce.Code != serve.ChatInvalidArgument || !strings.HasPrefix(ce.Message, tc.field+":") {
			t.Errorf("%s: %+v, want invalid_argument naming %s", tc.name, ce, tc.field)
		}
	}
	if l, err := s.BoardConversations(t.Context(), ann); err != nil || len(l) != 0 {
		t.Errorf("conversations after refusals = %v, %v; want none: nothing was claimed", l, err)
	}
}

// TestBoardPerson: the person asking through the board is the person the
// chat page knows by pairing: a thread a browser started and paired to
// them is theirs through the board too.
func TestBoardPerson(t *testing.T) {
	t.Parallel()
	s := newAskServer(t)
	th := "paired-thread"
	if _, err := s.BoardConversation(t.Context(), serve.BoardCaller{Who: "cat@example.com"}, th); err == nil {
		t.Fatal("a thread nobody holds: want not_found")
	}
	// A browser starts it; cat pairs it on the board.
	if _, err := s.BoardTalk(t.Context(), serve.BoardCaller{Who: "ops", All: true}, serve.Talk{Thread: th, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BoardConversation(t.Context(), serve.BoardCaller{Who: "cat@example.com"}, th); err == nil {
		t.Fatal("cat before pairing: want not_found")
	}
	s.Paired(agentlink.Paired{Thread: th, Who: "cat@example.com", Name: "Cat"})
	c, err := s.BoardConversation(t.Context(), serve.BoardCaller{Who: "cat@example.com"}, th)
	if err != nil || c.Pending == nil {
		t.Fatalf("cat after pairing = %+v, %v; want the waiting thread", c, err)
	}
	if _, err := s.BoardConversation(t.Context(), serve.BoardCaller{Who: "dan@example.com"}, th); err == nil {
		t.Error("dan: want not_found")
	}
}

// TestBoardChatPageAndDescribe: the page is GET /api/agent's; describe
// names the build, the tools, the MCP servers by name and command, the
// environment by names only, and the model.
func TestBoardChatPageAndDescribe(t *testing.T) {
	t.Parallel()
	s := newAskServer(t)
	ann := serve.BoardCaller{Who: "ann@example.com"}
	p, err := s.BoardChatPage(t.Context(), ann)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "asker" || len(p.Inputs) != 1 || p.Inputs[0].Name != "question" || p.Inputs[0].Type != "string" ||
		len(p.Outputs) != 1 || p.Paused != nil {
		t.Errorf("chat page = %+v", p)
	}
	d, err := s.BoardDescribe(t.Context(), ann)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"environment variable ASKER_TOKEN", "environment variable OPENAI_API_KEY", "model: stand-in"}
	if d.Name != "asker" || d.Build != "sha256:abc" || !d.Conversation || len(d.Tools) != 0 || !slices.Equal(d.Needs, want) {
		t.Errorf("describe = %+v, want needs %v", d, want)
	}

	ds, err := serve.New(t.Context(), serve.Config{Agent: desk.agent, Conversations: filepath.Join(t.TempDir(), "c.json"), Monitored: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err = ds.BoardDescribe(t.Context(), ann)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Tools, []string{"orders.lookup_order", "orders.refund"}) ||
		!slices.Equal(d.Needs, []string{"MCP server orders, started with go"}) || d.Conversation || len(d.Inputs) != 2 {
		t.Errorf("the refund desk described = %+v", d)
	}
}
