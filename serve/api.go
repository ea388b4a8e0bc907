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
}

func decidesOf(v governed.Verdict) *Decides {
	if v.Who == "" {
		return nil
	}
	return &Decides{Who: v.Who, Why: v.Why, Rule: v.Rule.ID}
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
}

// getAgent is GET /api/agent.
func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) error {
	f := s.agent.Flow
	d := Description{Name: f.Name, Description: f.Description, Inputs: []Channel{}, Outputs: []Channel{}}
	if s.pause != nil {
		d.Paused = pausedOf(s.pause())
	}
	channel := func(name string) Channel {
		c := Channel{Name: name}
		if ch := f.State[name]; ch != nil {
			c.Type, c.Description = ch.Type, ch.Description
		}
		return c
	}
	for _, n := range f.Inputs {
		d.Inputs = append(d.Inputs, channel(n))
	}
	for _, n := range f.Outputs {
		d.Outputs = append(d.Outputs, channel(n))
	}
	writeJSON(w, http.StatusOK, d)
	return nil
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
	if err := s.mayUse(r, thread); err != nil {
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
	if err := s.paused(); err != nil {
		return err
	}
	if err := s.claim(r, thread); err != nil {
		return err
	}
	if err := s.awaitReady(r); err != nil {
		return err
	}
	if err := s.paused(); err != nil {
		return err // paused while it waited for the board's word on the tools
	}
	in = s.withHistory(r.Context(), thread, in)
	res, v, err := s.gov.Invoke(s.runContext(r, thread), thread, in)
	if err != nil {
		return err
	}
	s.said(r.Context(), thread, res)
	s.convs.touch(r.Context(), thread, s.now())
	s.changed(thread)
	writeJSON(w, http.StatusOK, s.turn(thread, res, v))
	return nil
}

// postAnswer is POST /api/threads/{thread}/answer: {"answer": ...} answers
// what the thread's run waits for.
func (s *Server) postAnswer(w http.ResponseWriter, r *http.Request) error {
	thread, err := threadOf(r)
	if err != nil {
		return err
	}
	if err := s.mayUse(r, thread); err != nil {
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
	if err := s.awaitReady(r); err != nil {
		return err
	}
	res, v, err := s.gov.Answer(s.runContext(r, thread), thread, answer)
	if err != nil {
		return err
	}
	s.said(r.Context(), thread, res)
	s.convs.touch(r.Context(), thread, s.now())
	s.changed(thread)
	writeJSON(w, http.StatusOK, s.turn(thread, res, v))
	return nil
}

// awaitReady waits until runs may start (Config.Ready), or r ends.
func (s *Server) awaitReady(r *http.Request) error {
	if s.ready == nil {
		return nil
	}
	select {
	case <-s.ready:
		return nil
	case <-r.Context().Done():
		return r.Context().Err()
	}
}

// runContext is the context a run is made in: the request's values but
// not its end, so a run outlives a client that goes away, the thread, for
// the journal, and that the chat started it, and who when the door knows
// (runs.StartedBy), for the run's record.
func (s *Server) runContext(r *http.Request, thread string) context.Context {
	who := ""
	if c, ok := callerFrom(r.Context()); ok && c.visitor != "" {
		if p, ok := s.convs.person(c.visitor); ok {
			who = p.Address
		}
	}
	ctx := runs.StartedBy(context.WithoutCancel(r.Context()), runs.ByChat, who)
	return journal.WithThread(ctx, thread)
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
		if v := in[k]; v != nil && !fits(ch.Type, v) {
			return badRequest(field, "want %s for a %s channel, got %s", article(ch.Type), ch.Type, flow.KindOf(v))
		}
	}
	return nil
}

// fits reports whether v is of channel type typ; a type not said, and a
// file, take anything.
func fits(typ string, v any) bool {
	var ok bool
	switch typ {
	case flow.ChannelString:
		_, ok = v.(string)
	case flow.ChannelNumber:
		_, ok = v.(float64)
	case flow.ChannelBoolean:
		_, ok = v.(bool)
	case flow.ChannelList:
		_, ok = v.([]any)
	case flow.ChannelObject:
		_, ok = v.(map[string]any)
	default:
		ok = true
	}
	return ok
}

func article(typ string) string {
	if typ == flow.ChannelObject {
		return "an object"
	}
	return "a " + typ
}

// turn is a run's result as the API sends it.
func (s *Server) turn(thread string, res flow.Result, v governed.Verdict) Turn {
	t := Turn{Thread: thread, Pending: res.Pending, Decides: decidesOf(v)}
	if res.Finished() {
		t.State = res.State
		if outs := s.agent.Flow.Outputs; len(outs) > 0 {
			t.Reply = flow.Text(res.State[outs[0]])
		}
	}
	return t
}
