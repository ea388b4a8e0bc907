package serve

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/transcript"
)

// What GET /api/conversation returns: DefaultConversationTurns of a
// thread's newest turns unless limit says otherwise, at most
// transcript.MaxReadTurns.
const DefaultConversationTurns = 50

// ConversationTurns is what GET /api/conversation answers: what was said
// on a thread, oldest first, as the transcript keeps it.
type ConversationTurns struct {
	Thread string            `json:"thread"`
	Turns  []transcript.Turn `json:"turns"`
}

// getConversation is GET /api/conversation?thread=&limit= (the API
// reference's GET /conversation?thread=): the newest turns of one thread,
// behind the door. A thread that is not the caller's is 404 exactly like
// one the agent holds nothing of.
func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	thread := q.Get("thread")
	if err := validThread(thread); err != nil {
		return badRequest("thread", "%v", err)
	}
	limit := DefaultConversationTurns
	if v := q.Get("limit"); v != "" || q.Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > transcript.MaxReadTurns {
			return badRequest("limit", "%q: want a whole number from 1 to %d (nothing is %d)", v, transcript.MaxReadTurns, DefaultConversationTurns)
		}
		limit = n
	}
	if err := s.mayUse(r, thread); err != nil {
		return err
	}
	turns, err := s.transcript.Thread(thread, limit)
	if err != nil {
		return err
	}
	if len(turns) == 0 && !s.convs.known(thread) {
		return errNoConversation
	}
	writeJSON(w, http.StatusOK, ConversationTurns{Thread: thread, Turns: turns})
	return nil
}

// said writes a finished run's turn to the transcript, with the time the
// conversation's history gives it, and who asked when the door knows the
// person. A run that waits has said nothing yet.
func (s *Server) said(ctx context.Context, thread string, res flow.Result) {
	if s.transcript == nil || !res.Finished() || res.Turn == nil {
		return
	}
	who := ""
	if c, ok := callerFrom(ctx); ok {
		if p, ok := s.convs.person(c.visitor); ok {
			who = p.Address
		}
	}
	s.transcript.Write(ctx, transcript.Turn{At: res.Turn.At, Thread: thread, Who: who, Asked: res.Turn.Asked, Answered: res.Turn.Answered})
}

// maxTalking is how many threads the server remembers having talked on;
// past it the set starts again, which costs a re-read of the transcript
// and nothing else (a turn the history already holds is dropped).
const maxTalking = 10000

// talking is the set of threads this process has run a conversation on.
type talking struct {
	mu sync.Mutex
	m  map[string]bool
}

// first reports whether thread is new to this process, and marks it.
func (t *talking) first(thread string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[thread] {
		return false
	}
	if t.m == nil || len(t.m) >= maxTalking {
		t.m = map[string]bool{}
	}
	t.m[thread] = true
	return true
}

// withHistory adds to a conversation's input, for the first turn of a
// thread this process has not been talking on, the thread's last
// flow.KeptTurns turns out of the transcript, as its history (the API
// reference's 0.36: the agent is shown the conversation again). The engine
// drops a turn the thread's memory already holds, matched on at. A
// transcript that cannot be read is logged, and the run goes on without.
func (s *Server) withHistory(ctx context.Context, thread string, in map[string]any) map[string]any {
	if s.transcript == nil || !s.agent.Flow.Conversation || !s.talking.first(thread) || !s.transcript.Has(thread) {
		return in
	}
	turns, err := s.transcript.Thread(thread, flow.KeptTurns)
	if err != nil {
		s.log.WarnContext(ctx, "transcript not read", "thread", thread, "err", err)
		return in
	}
	h, _ := in[flow.HistoryChannel].([]any)
	for _, t := range turns {
		h = append(h, flow.Turn{At: t.At, Asked: t.Asked, Answered: t.Answered}.History())
	}
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	out[flow.HistoryChannel] = h
	return out
}
