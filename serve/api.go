package serve

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/runs"
)

// Turn is what a message or an answer comes to: a run that finished, with
// its state and reply, or one that stopped to wait, with what it waits
// for.
type Turn struct {
	Thread string `json:"thread"`
	// Run is the run's id: the same across its pauses.
	Run string `json:"run,omitempty"`
	// State is the final state of a run that finished. A run that waits
	// shows only its Pending: an approval shows the channels it names,
	// never the whole state.
	State flow.State `json:"state,omitempty"`
	// Reply is the flow's first output channel as text: a string as it
	// is, anything else as JSON. Empty when the flow names no output.
	Reply string `json:"reply,omitempty"`
	// Pending is what a stopped run waits for: answer it at
	// POST /api/threads/{thread}/answer — unless Decides says the board
	// decides it.
	Pending *flow.Pending `json:"pending,omitempty"`
	// Decides says, for an approval, who answers it.
	Decides *Decides `json:"decides,omitempty"`
}

// Decides is who answers an approval a run waits at: "chat" (answer it
// here), or "board" (the organisation decides; an answer here is refused
// and the run goes on by itself when the board decides).
type Decides struct {
	Who  string `json:"who"`
	Why  string `json:"why"`
	Rule string `json:"rule,omitempty"`
	// Approval: the board's id for the approval, once the board has
	// answered its raise here.
	Approval string `json:"approval,omitempty"`
}

func decidesOf(v governed.Verdict) *Decides {
	if v.Who == "" {
		return nil
	}
	return &Decides{Who: v.Who, Why: v.Why, Rule: v.Rule.ID, Approval: v.Approval}
}

// Thread is where a thread stands.
type Thread struct {
	Thread  string        `json:"thread"`
	Waiting bool          `json:"waiting"`
	Pending *flow.Pending `json:"pending,omitempty"`
	Decides *Decides      `json:"decides,omitempty"`
	// Decided is what the board's last decision on the thread came to,
	// since this agent started: how the page learns the reply of a run
	// the board resumed, or that the board ended it.
	Decided *Decided `json:"decided,omitempty"`
	// People: who is in the thread, paired or verified, in the order they
	// came in.
	People []Person `json:"people,omitempty"`
}

// Decided is what a decision made on the board came to: the run went on
// (Turn: finished, or waiting again), or it ended without an answer
// (Ended: "cancelled" or "expired", or "failed", with Why).
type Decided struct {
	Turn
	Ended string    `json:"ended,omitempty"`
	Why   string    `json:"why,omitempty"`
	At    time.Time `json:"at"`
	// Receipt: the board's signed receipt of the decision (docs/receipts.md).
	Receipt string `json:"receipt,omitempty"`
}

// Description is what the chat page needs to know about the flow.
type Description struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Inputs      []Channel `json:"inputs"`
	Outputs     []Channel `json:"outputs"`
	// Paused: set while the agent takes no new work, and why.
	Paused *Paused `json:"paused,omitempty"`
}

// Channel is one of the flow's inputs or outputs.
type Channel struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	// Accept is a file channel's media types ("image/*"), for the page's
	// file control.
	Accept string `json:"accept,omitempty"`
}

// getAgent is GET /api/agent.
func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.description())
	return nil
}

// description is what the chat page is composed of.
func (s *Server) description() Description {
	f := s.agent.Flow
	d := Description{Name: f.Name, Description: f.Description, Inputs: []Channel{}, Outputs: []Channel{}}
	if s.pause != nil {
		d.Paused = pausedOf(s.pause())
	}
	channel := func(name string) Channel {
		c := Channel{Name: name}
		if ch := f.State[name]; ch != nil {
			c.Type, c.Description, c.Accept = ch.Type, ch.Description, ch.Accept
		}
		return c
	}
	for _, n := range f.Inputs {
		d.Inputs = append(d.Inputs, channel(n))
	}
	for _, n := range f.Outputs {
		d.Outputs = append(d.Outputs, channel(n))
	}
	return d
}

// getConversations is GET /api/conversations: pointers only, to the
// threads the index and the waiting store hold and those the transcript
// holds, each with how many turns the transcript has of it.
func (s *Server) getConversations(w http.ResponseWriter, r *http.Request) error {
	list, err := s.convs.list(r.Context(), s.agent)
	if err != nil {
		return err
	}
	list = withTurns(list, s.transcript.Conversations())
	writeJSON(w, http.StatusOK, map[string]any{"conversations": s.visible(r.Context(), list)})
	return nil
}

// getThread is GET /api/threads/{thread}: what it waits for, if anything.
func (s *Server) getThread(w http.ResponseWriter, r *http.Request) error {
	thread, err := threadOf(r)
	if err != nil {
		return err
	}
	if err := s.mayUse(r.Context(), thread); err != nil {
		return err
	}
	p, err := s.agent.Graph.Pending(r.Context(), thread)
	if err != nil {
		return err
	}
	v, err := s.gov.Verdict(r.Context(), thread, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Thread{Thread: thread, Waiting: p != nil, Pending: p, Decides: decidesOf(v),
		Decided: s.decided.get(thread), People: s.convs.people(thread)})
	return nil
}

// postMessage is POST /api/threads/{thread}/messages: {"input": {...}} or
// {"text": "..."} starts a run.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) error {
	thread, err := threadOf(r)
	if err != nil {
		return err
	}
	body, err := readObject(w, r, "input", "text")
	if err != nil {
		return err
	}
	in, err := s.input(body)
	if err != nil {
		return err
	}
	t, err := s.message(r.Context(), thread, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// message starts a run on thread with in, for the caller on ctx: refused
// while paused, the thread claimed for a visitor who starts it, after the
// wait for runs to be allowed, with the conversation's history when the
// process has not talked on it; the turn is written to the transcript and
// the thread's pointer moves. The one path of every new message, from the
// page or through the board.
func (s *Server) message(ctx context.Context, thread string, in map[string]any) (Turn, error) {
	if err := s.paused(); err != nil {
		return Turn{}, err
	}
	if err := s.claim(ctx, thread); err != nil {
		return Turn{}, err
	}
	if err := s.ownFiles(ctx, thread, in, func(ch string) string { return "input." + ch }); err != nil {
		return Turn{}, err
	}
	if err := s.awaitReady(ctx); err != nil {
		return Turn{}, err
	}
	if err := s.paused(); err != nil {
		return Turn{}, err // paused while it waited for the board's word on the tools
	}
	in = s.withHistory(ctx, thread, in)
	res, v, err := s.gov.Invoke(s.runContext(ctx, thread), thread, in)
	if err != nil {
		return Turn{}, err
	}
	s.said(ctx, thread, res)
	s.convs.touch(ctx, thread, s.now())
	s.changed(thread)
	return s.turn(thread, res, v), nil
}

// postAnswer is POST /api/threads/{thread}/answer: {"answer": ...} answers
// what the thread's run waits for.
func (s *Server) postAnswer(w http.ResponseWriter, r *http.Request) error {
	thread, err := threadOf(r)
	if err != nil {
		return err
	}
	if err := s.mayUse(r.Context(), thread); err != nil {
		return err
	}
	body, err := readObject(w, r, "answer")
	if err != nil {
		return err
	}
	raw, ok := body["answer"]
	if !ok {
		return badRequest("answer", `required: "yes" or "no" for an approval, the answer for a question`)
	}
	var answer any
	if err := json.Unmarshal(raw, &answer); err != nil {
		return badRequest("answer", "not JSON: %v", err)
	}
	t, err := s.answer(r.Context(), thread, answer)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// answer answers what the run on thread waits for, once runs may start:
// the caller may use the thread (mayUse, checked first). The turn is
// written to the transcript and the thread's pointer moves.
func (s *Server) answer(ctx context.Context, thread string, answer any) (Turn, error) {
	if err := s.awaitReady(ctx); err != nil {
		return Turn{}, err
	}
	answer, err := s.ownAnswer(ctx, thread, answer)
	if err != nil {
		return Turn{}, err
	}
	res, v, err := s.gov.Answer(s.runContext(ctx, thread), thread, answer)
	if err != nil {
		return Turn{}, err
	}
	s.said(ctx, thread, res)
	s.convs.touch(ctx, thread, s.now())
	s.changed(thread)
	return s.turn(thread, res, v), nil
}

// awaitReady waits until runs may start (Config.Ready), or ctx ends.
func (s *Server) awaitReady(ctx context.Context) error {
	if s.ready == nil {
		return nil
	}
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runContext is the context a run is made in: the request's values but
// not its end, so a run outlives a client that goes away, the thread, for
// the journal, and that the chat started it, and who when the door knows
// (runs.StartedBy), for the run's record.
func (s *Server) runContext(ctx context.Context, thread string) context.Context {
	who := ""
	if c, ok := callerFrom(ctx); ok && c.visitor != "" {
		if p, ok := s.convs.person(c.visitor); ok {
			who = p.Address
		}
	}
	return journal.WithThread(runs.StartedBy(context.WithoutCancel(ctx), runs.ByChat, who), thread)
}

// input reads a message's body into a run's input: input as it is, after
// checking its channels, or text written to the flow's first input
// channel, read by that channel's type.
func (s *Server) input(body map[string]json.RawMessage) (map[string]any, error) {
	rawIn, hasIn := body["input"]
	rawText, hasText := body["text"]
	switch {
	case hasIn && hasText:
		return nil, badRequest("input", "sent with text: send one of them")
	case hasText:
		var text string
		if err := json.Unmarshal(rawText, &text); err != nil {
			return nil, badRequest("text", "want a string")
		}
		if strings.TrimSpace(text) == "" {
			return nil, badRequest("text", "empty")
		}
		ins := s.agent.Flow.Inputs
		if len(ins) == 0 {
			return nil, badRequest("text", "the flow names no inputs to write it to: send input")
		}
		v, err := s.agent.Input(ins[0], text)
		if err != nil {
			return nil, badRequest("text", "for input %s: %v", ins[0], err)
		}
		return map[string]any{ins[0]: v}, nil
	case hasIn:
		var in map[string]any
		if err := json.Unmarshal(rawIn, &in); err != nil || in == nil {
			return nil, badRequest("input", "want an object of channel names and values")
		}
		return in, s.checkInput(in)
	}
	return nil, badRequest("input", `required: {"input": {...}} or {"text": "..."}`)
}

// checkInput refuses a channel the flow does not declare, one of the
// engine's own, and a value that is not of its channel's type.
func (s *Server) checkInput(in map[string]any) error {
	f := s.agent.Flow
	for _, k := range slices.Sorted(maps.Keys(in)) {
		field := "input." + k
		switch {
		case k == flow.HistoryChannel && f.Conversation:
			continue // earlier turns a caller hands a conversation
		case strings.HasPrefix(k, "__"):
			return badRequest(field, "the engine's own channel")
		case f.State == nil:
			continue // a flow that declares no state is not checked
		}
		ch := f.State[k]
		if ch == nil {
			return badRequest(field, "the flow declares no such channel")
		}
		if v := in[k]; v != nil && ch.Type == flow.ChannelFile {
			if _, err := flow.FileOf(v); err != nil {
				return badRequest(field, "want a file object {id, name, mediaType, url, bytes} from POST /files, never the bytes: %v", err)
			}
		} else if v != nil && !flow.Fits(ch.Type, v) {
			return badRequest(field, "want %s for a %s channel, got %s", article(ch.Type), ch.Type, flow.KindOf(v))
		}
	}
	return nil
}

func article(typ string) string {
	if typ == flow.ChannelObject {
		return "an object"
	}
	return "a " + typ
}

// turn is a run's result as the API sends it.
func (s *Server) turn(thread string, res flow.Result, v governed.Verdict) Turn {
	t := Turn{Thread: thread, Run: res.Run, Pending: res.Pending, Decides: decidesOf(v)}
	if res.Finished() {
		t.State = res.State
		if outs := s.agent.Flow.Outputs; len(outs) > 0 {
			t.Reply = flow.Text(res.State[outs[0]])
		}
	}
	return t
}
