package node_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
)

// chatty is a conversation with the stand-in model.
const chatty = `{
  "version": "0.17", "name": "chatty", "description": "Answers, remembering.",
  "conversation": true, "inputs": ["question"], "outputs": ["answer"],
  "state": {"question": {"type": "string", "description": "What is asked."}, "answer": {"type": "string"}},
  "start": "answer",
  "nodes": [{"id": "answer", "type": "llm", "output": "answer", "prompt": "Answer: {{question}}"}],
  "edges": [{"from": "answer", "to": "END"}]
}`

// TestChatThroughTheBoard: a real board and a real served agent; two
// people signed in to the board talk to the agent through ChatService,
// each seeing only their own conversation (another's is not_found like a
// missing one), and an admin sees both; describe and the chat page come
// from the agent.
func TestChatThroughTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := filepath.Join(t.TempDir(), "chatty")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(chatty), 0o600); err != nil {
		t.Fatal(err)
	}
	startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("chatty")})

	const password = "a long enough password"
	person := func(email string) boardv1connect.ChatServiceClient {
		bt.AddUser(email, identity.RoleViewer, password)
		return boardv1connect.NewChatServiceClient(bt.SessionClient(bt.SignIn(email, password)))
	}
	ann, bob := person("ann@example.com"), person("bob@example.com")
	admin := boardv1connect.NewChatServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleAdmin)))

	var annTurn *boardv1.TalkResponse
	boardtest.Eventually(t, 60*time.Second, "the agent linked and announcing chat", func() bool {
		var err error
		annTurn, err = ann.Talk(t.Context(), &boardv1.TalkRequest{Agent: "chatty", Text: "hello"})
		return err == nil
	})
	th := annTurn.GetTurn().GetThread()
	if !strings.HasPrefix(th, "chat-") || annTurn.GetTurn().GetReply() == "" || annTurn.GetTurn().GetRunId() == "" {
		t.Fatalf("ann's turn = %v, want a reply on a new chat- thread", annTurn)
	}
	bobTurn, err := bob.Talk(t.Context(), &boardv1.TalkRequest{Agent: "chatty", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	threads := func(c boardv1connect.ChatServiceClient) []string {
		t.Helper()
		res, err := c.ListThreads(t.Context(), &boardv1.ListThreadsRequest{Agent: "chatty"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range res.GetThreads() {
			out = append(out, x.GetThread())
		}
		slices.Sort(out)
		return out
	}
	if got := threads(ann); !slices.Equal(got, []string{th}) {
		t.Errorf("ann's threads = %v, want only %s", got, th)
	}
	if got := threads(admin); !slices.Contains(got, th) || !slices.Contains(got, bobTurn.GetTurn().GetThread()) {
		t.Errorf("the admin's threads = %v, want both", got)
	}
	got, err := ann.GetThread(t.Context(), &boardv1.GetThreadRequest{Agent: "chatty", Thread: th})
	if err != nil || len(got.GetTurns()) != 1 || got.GetTurns()[0].GetWho() != "ann@example.com" || !strings.Contains(got.GetTurns()[0].GetAsked(), "hello") {
		t.Fatalf("ann's conversation = %v, %v; want her one turn", got, err)
	}
	_, missing := bob.GetThread(t.Context(), &boardv1.GetThreadRequest{Agent: "chatty", Thread: "no-such-thread"})
	_, theirs := bob.GetThread(t.Context(), &boardv1.GetThreadRequest{Agent: "chatty", Thread: th})
	if connect.CodeOf(theirs) != connect.CodeNotFound || connect.CodeOf(missing) != connect.CodeNotFound ||
		strings.ReplaceAll(theirs.Error(), th, "") != strings.ReplaceAll(missing.Error(), "no-such-thread", "") {
		t.Errorf("bob reading ann's thread = %v, a missing one = %v; want not_found alike", theirs, missing)
	}
	nope, _ := structpb.NewStruct(map[string]any{"nope": 1})
	_, err = ann.Talk(t.Context(), &boardv1.TalkRequest{Agent: "chatty", Thread: th, Input: nope})
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.Contains(ce.Message(), "input.nope") {
		t.Errorf("an input the flow does not declare = %v, want invalid_argument naming input.nope", err)
	}
	if _, err := admin.GetThread(t.Context(), &boardv1.GetThreadRequest{Agent: "chatty", Thread: th}); err != nil {
		t.Errorf("the admin reading ann's thread: %v", err)
	}
	page, err := bob.GetChatPage(t.Context(), &boardv1.GetChatPageRequest{Agent: "chatty"})
	if err != nil || page.GetName() != "chatty" || len(page.GetInputs()) != 1 {
		t.Errorf("chat page = %v, %v", page, err)
	}
	d, err := bob.DescribeAgent(t.Context(), &boardv1.DescribeAgentRequest{Agent: "chatty"})
	if err != nil || !strings.HasPrefix(d.GetBuild(), "sha256:") || !d.GetConversation() || !slices.Contains(d.GetNeeds(), "model: stand-in") {
		t.Errorf("describe = %v, %v", d, err)
	}
}
