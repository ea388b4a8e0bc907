package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/transcript"
)

// The board's chat window asks a served agent five things over the link
// (docs/chat.md): a turn (BoardTalk), the composed page (BoardChatPage),
// the flow's description (BoardDescribe), the caller's conversations
// (BoardConversations) and one of them (BoardConversation). Each is asked
// for somebody — the person signed in to the board, or an operator token —
// and the agent keeps its door for them exactly as for a browser.

// HowBoard is how a person asking through the board's chat window is known:
// the board signed them in.
const HowBoard = "board"

// The chat window's bounds on what the agent answers: each answer is one
// message on the link, which carries at most 1 MiB.
const (
	// MaxChatThreads is the most conversations BoardConversations lists:
	// the newest.
	MaxChatThreads = 200
	// ChatTurns is the most turns BoardConversation returns: the newest.
	ChatTurns = 100
	// MaxChatTurnsBytes is the most text BoardConversation's turns carry,
	// asked and answered together; past it the older turns are left out.
	MaxChatTurnsBytes = 640 << 10
	// MaxChatReply is the most of a reply a turn through the board carries;
	// a longer one is cut on a character's edge and ends with "…".
	MaxChatReply = 128 << 10
	// MaxChatMessage is the most a refusal's message says.
	MaxChatMessage = 512
)

// Refusal codes of the chat window, as the link's error codes name them.
const (
	ChatInvalidArgument    = "invalid_argument"
	ChatNotFound           = "not_found"
	ChatFailedPrecondition = "failed_precondition"
	ChatUnavailable        = "unavailable"
	ChatInternal           = "internal"
)

// ChatError is a chat request refused: a code (ChatInvalidArgument, …) and
// a message for the person, which names the field at fault. An internal
// one says nothing of what failed; the agent's log does.
type ChatError struct {
	Code    string
	Message string
}

func (e *ChatError) Error() string { return e.Code + ": " + e.Message }

// BoardCaller is who asks through the board: Who, the signed-in person's
// canonical address or an operator token's name; All, set for an admin,
// who sees and continues every conversation.
type BoardCaller struct {
	Who string
	All bool
}

// boardVisitor is the visitor a person asking through the board is known
// as: their own, apart from any browser's, and always the same for them.
func boardVisitor(who string) string {
	sum := sha256.Sum256([]byte(who))
	return "board:" + hex.EncodeToString(sum[:])
}

// isBoardVisitor reports whether visitor is one boardVisitor made.
func isBoardVisitor(visitor string) bool { return strings.HasPrefix(visitor, "board:") }

// boardContext is ctx with the caller bc is, as the door sees them: a
// visitor of their own who is the person Who — so they also see the
// threads they are in by pairing or verify on the chat page — and, with
// All, the operator.
func (s *Server) boardContext(ctx context.Context, bc BoardCaller) (context.Context, error) {
	who := bc.Who
	switch {
	case strings.TrimSpace(who) == "":
		return ctx, &ChatError{Code: ChatInvalidArgument, Message: "who: empty: the board names who asks"}
	case len(who) > transcript.MaxWhoBytes:
		return ctx, &ChatError{Code: ChatInvalidArgument, Message: fmt.Sprintf("who: %d bytes, at most %d", len(who), transcript.MaxWhoBytes)}
	case !utf8.ValidString(who):
		return ctx, &ChatError{Code: ChatInvalidArgument, Message: "who: not UTF-8"}
	}
	v := boardVisitor(who)
	s.convs.boardPerson(v, Person{Address: who, How: HowBoard, At: s.now().UTC()})
	return withCaller(ctx, caller{operator: bc.All, visitor: v}), nil
}

// Talk is one turn asked through the board: exactly one of Text, Input
// and Answer (with Answering set, so that a null answer is one).
type Talk struct {
	// Thread: "" starts a new conversation, named as the chat page names
	// one; required with Answering.
	Thread string
	// Text: a message in words, written to the flow's first input.
	Text string
	// Input: a message as values, by input name.
	Input map[string]any
	// Answer: the answer to what the thread's run waits for.
	Answer    any
	Answering bool
}

// BoardTalk is one turn for bc, on the same path as the chat page's
// messages and answers: a new message is refused while paused, claims a
// thread nobody has, waits until runs may start, and is answered by the
// governed run; the turn is kept in the transcript with who asked.
func (s *Server) BoardTalk(ctx context.Context, bc BoardCaller, t Talk) (Turn, error) {
	ctx, err := s.boardContext(ctx, bc)
	if err != nil {
		return Turn{}, err
	}
	given := 0
	for _, has := range []bool{t.Text != "", t.Input != nil, t.Answering} {
		if has {
			given++
		}
	}
	if given != 1 {
		return Turn{}, &ChatError{Code: ChatInvalidArgument, Message: "text, input, answer: exactly one is required"}
	}
	thread := t.Thread
	if t.Answering {
		if err := validThread(thread); err != nil {
			return Turn{}, s.chatRefusal(ctx, thread, err)
		}
		if err := s.mayUse(ctx, thread); err != nil {
			return Turn{}, s.chatRefusal(ctx, thread, err)
		}
		turn, err := s.answer(ctx, thread, t.Answer)
		return boardTurn(turn), s.chatRefusal(ctx, thread, err)
	}
	if thread == "" {
		thread = newThreadName(s.now())
	} else if err := validThread(thread); err != nil {
		return Turn{}, s.chatRefusal(ctx, thread, err)
	}
	body := map[string]json.RawMessage{}
	for k, v := range map[string]any{"text": t.Text, "input": t.Input} {
		if k == "text" && t.Text == "" || k == "input" && t.Input == nil {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return Turn{}, &ChatError{Code: ChatInvalidArgument, Message: k + ": not JSON"}
		}
		body[k] = raw
	}
	in, err := s.input(body)
	if err != nil {
		return Turn{}, s.chatRefusal(ctx, thread, err)
	}
	turn, err := s.message(ctx, thread, in)
	return boardTurn(turn), s.chatRefusal(ctx, thread, err)
}

// boardTurn is a turn as the board is sent it: without the run's state,
// and its reply cut to MaxChatReply.
func boardTurn(t Turn) Turn {
	t.State = nil
	t.Reply = clipBytes(t.Reply, MaxChatReply)
	return t
}

// newThreadName names a new conversation as the chat page does:
// "chat-", the time in milliseconds in base 36, "-" and 12 random hex
// digits.
func newThreadName(now time.Time) string {
	b := make([]byte, 6)
	rand.Read(b) // never fails (crypto/rand)
	return "chat-" + strconv.FormatInt(now.UnixMilli(), 36) + "-" + hex.EncodeToString(b)
}

// BoardChatPage is what GET /api/agent returns: the flow's name,
// description, inputs and outputs, and the pause.
func (s *Server) BoardChatPage(ctx context.Context, bc BoardCaller) (Description, error) {
	if _, err := s.boardContext(ctx, bc); err != nil {
		return Description{}, err
	}
	return s.description(), nil
}

// About is what the flow says about itself, for the board's chat window.
type About struct {
	Name        string
	Description string
	// Build: "sha256:…" (Config.Build).
	Build   string
	Inputs  []Channel
	Outputs []Channel
	// Tools: the MCP tools the flow declares, as "<server>.<tool>", sorted.
	Tools []string
	// Needs: what it needs to run, in words: each MCP server it starts,
	// by name and command (never its arguments or environment); each
	// environment variable it reads, by name (never its value); the model.
	Needs []string
	// Conversation: it remembers what was said on a thread.
	Conversation bool
}

// BoardDescribe is what the flow says about itself and needs to run.
func (s *Server) BoardDescribe(ctx context.Context, bc BoardCaller) (About, error) {
	if _, err := s.boardContext(ctx, bc); err != nil {
		return About{}, err
	}
	f := s.agent.Flow
	d := s.description()
	a := About{Name: d.Name, Description: d.Description, Build: s.about.Build, Inputs: d.Inputs, Outputs: d.Outputs,
		Tools: []string{}, Needs: []string{}, Conversation: f.Conversation}
	env := slices.Clone(s.about.Env)
	if r := f.Requires; r != nil {
		for _, name := range slices.Sorted(maps.Keys(r.MCP)) {
			m := r.MCP[name]
			if m == nil {
				continue
			}
			for _, t := range m.Tools {
				a.Tools = append(a.Tools, name+"."+t.Name)
			}
			a.Needs = append(a.Needs, fmt.Sprintf("MCP server %s, started with %s", name, m.Command))
		}
		env = append(env, r.Env...)
	}
	slices.Sort(a.Tools)
	slices.Sort(env)
	for _, name := range slices.Compact(env) {
		a.Needs = append(a.Needs, "environment variable "+name)
	}
	if s.about.Model != "" {
		a.Needs = append(a.Needs, "model: "+s.about.Model)
	}
	return a, nil
}

// BoardConversations is the conversations bc may see, newest first, as
// GET /api/conversations lists them: at most MaxChatThreads.
func (s *Server) BoardConversations(ctx context.Context, bc BoardCaller) ([]Conversation, error) {
	ctx, err := s.boardContext(ctx, bc)
	if err != nil {
		return nil, err
	}
	list, err := s.convs.list(ctx, s.agent)
	if err != nil {
		return nil, s.chatRefusal(ctx, "", err)
	}
	list = s.visible(ctx, withTurns(list, s.transcript.Conversations()))
	if len(list) > MaxChatThreads {
		list = list[:MaxChatThreads]
	}
	return list, nil
}

// ChatThread is one conversation as the board's chat window draws it: its
// newest turns, oldest first, and what its run waits for.
type ChatThread struct {
	Thread  string
	Turns   []transcript.Turn
	Pending *flow.Pending
	Decides *Decides
}

// BoardConversation is one conversation bc may see: its last ChatTurns
// turns out of the transcript (within MaxChatTurnsBytes), and what its
// run waits for. A thread that is not theirs is not_found exactly like one
// the agent holds nothing of.
func (s *Server) BoardConversation(ctx context.Context, bc BoardCaller, thread string) (ChatThread, error) {
	ctx, err := s.boardContext(ctx, bc)
	if err != nil {
		return ChatThread{}, err
	}
	if err := validThread(thread); err != nil {
		return ChatThread{}, s.chatRefusal(ctx, thread, err)
	}
	if err := s.mayUse(ctx, thread); err != nil {
		return ChatThread{}, s.chatRefusal(ctx, thread, err)
	}
	turns, err := s.transcript.Thread(thread, ChatTurns)
	if err != nil {
		return ChatThread{}, s.chatRefusal(ctx, thread, err)
	}
	p, err := s.agent.Graph.Pending(ctx, thread)
	if err != nil {
		return ChatThread{}, s.chatRefusal(ctx, thread, err)
	}
	if len(turns) == 0 && p == nil && !s.convs.known(thread) {
		return ChatThread{}, s.chatRefusal(ctx, thread, errNoConversation)
	}
	v, err := s.gov.Verdict(ctx, thread, p)
	if err != nil {
		return ChatThread{}, s.chatRefusal(ctx, thread, err)
	}
	size, from := 0, len(turns)
	for from > 0 {
		t := turns[from-1]
		if size += len(flow.Text(t.Asked)) + len(flow.Text(t.Answered)); size > MaxChatTurnsBytes {
			break
		}
		from--
	}
	return ChatThread{Thread: thread, Turns: turns[from:], Pending: p, Decides: decidesOf(v)}, nil
}

// chatRefusal is err as the board's chat window is told it: what the
// caller got wrong with its code and field, what cannot be done now as
// failed_precondition, and anything else logged and sent as a bare
// internal error.
func (s *Server) chatRefusal(ctx context.Context, thread string, err error) error {
	var (
		ce *ChatError
		re *requestError
		ne *flow.NodeError
		pe *pausedError
		fe *flow.FileError
	)
	refuse := func(code, msg string) error {
		return &ChatError{Code: code, Message: clipBytes(msg, MaxChatMessage)}
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.As(err, &pe):
		return refuse(ChatFailedPrecondition, pe.Error())
	case errors.As(err, &fe):
		return refuse(ChatInvalidArgument, fe.Channel+": "+fe.Problem)
	case errors.As(err, &re):
		code := ChatInvalidArgument
		switch re.status {
		case http.StatusNotFound:
			code = ChatNotFound
		case http.StatusConflict:
			code = ChatFailedPrecondition
		case http.StatusServiceUnavailable:
			code = ChatUnavailable
		}
		return refuse(code, re.Error())
	case errors.Is(err, flow.ErrWaiting):
		return refuse(ChatFailedPrecondition, fmt.Sprintf("thread: %s waits for an answer: send the answer", thread))
	case errors.Is(err, governed.ErrGoverned):
		return refuse(ChatFailedPrecondition, "answer: "+err.Error())
	case errors.Is(err, flow.ErrNothingPending):
		return refuse(ChatFailedPrecondition, fmt.Sprintf("answer: thread %s has nothing waiting for an answer", thread))
	case errors.Is(err, flow.ErrEmptyAnswer):
		return refuse(ChatInvalidArgument, `answer: empty; a refusal needs a word: "no" or {"approved": false}`)
	case errors.As(err, &ne):
		s.log.ErrorContext(ctx, "run failed", "thread", thread, "node", ne.Node, "err", err)
		return refuse(ChatInternal, fmt.Sprintf("the run failed at node %s; the agent's log says why", ne.Node))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return refuse(ChatUnavailable, "the request ended before the agent answered")
	}
	s.log.ErrorContext(ctx, "chat request failed", "thread", thread, "err", err)
	return refuse(ChatInternal, "internal error")
}

// clipBytes is s cut to at most n bytes on a character's edge, ending
// with "…" when it was cut.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}
