package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/symphonix/symphonix/agentlink"
)

// Board is the board a served agent asks who is in a conversation, and
// tells where its conversations are. *agentlink.Link is one.
type Board interface {
	HowToIdentify(ctx context.Context) (string, error)
	Pair(ctx context.Context, thread string) (code string, expires time.Time, err error)
	Verify(ctx context.Context, who, secret string, within time.Duration) agentlink.VerifyResult
	ReportConversations(ctx context.Context, pointers []agentlink.ConversationPointer, full bool) error
}

// askWithin is how long the door and pair wait for the board.
const askWithin = 5 * time.Second

// Use gives the board to ask (with Config.Monitored set). Until it is
// given, the board cannot be reached: pair is refused, verify is no.
func (s *Server) Use(b Board) {
	s.boardMu.Lock()
	s.board = b
	s.boardMu.Unlock()
	s.ReportAll()
}

func (s *Server) boardOrNil() Board {
	s.boardMu.Lock()
	defer s.boardMu.Unlock()
	return s.board
}

// Door is what GET /api/door says: the board's door, and who the caller is.
type Door struct {
	// Door: the board's door, "pairing", "verify" or "none"; "" when no
	// board is configured or it cannot be asked now (Why says which).
	Door string `json:"door"`
	Why  string `json:"why,omitempty"`
	// You: who the visitor is, once a thread of theirs was paired or
	// verified.
	You *Person `json:"you,omitempty"`
	// Operator: the request came from the agent's operator (no board, or
	// a client on this machine that is not a browser): every thread is
	// theirs.
	Operator bool `json:"operator,omitempty"`
}

// PairCode is what POST /api/threads/{thread}/pair answers: the code to
// enter on the board, and when it stops working.
type PairCode struct {
	Thread    string    `json:"thread"`
	Code      string    `json:"code"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Verified is what POST /api/threads/{thread}/verify answers: OK and who,
// or not OK and why.
type Verified struct {
	OK     bool    `json:"ok"`
	Why    string  `json:"why,omitempty"`
	Person *Person `json:"person,omitempty"`
}

// getDoor is GET /api/door.
func (s *Server) getDoor(w http.ResponseWriter, r *http.Request) error {
	c, _ := callerFrom(r.Context())
	d := Door{Operator: c.operator}
	if p, ok := s.convs.person(c.visitor); ok {
		d.You = &p
	}
	b := s.boardOrNil()
	switch {
	case !s.monitored:
		d.Why = "no board is configured"
	case b == nil:
		d.Why = "the board cannot be reached now"
	default:
		ctx, cancel := context.WithTimeout(r.Context(), askWithin)
		defer cancel()
		door, err := b.HowToIdentify(ctx)
		if err != nil {
			d.Why = "the board cannot be reached now"
		} else {
			d.Door = door
		}
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// postPair is POST /api/threads/{thread}/pair with {}: a code from the
// board for the person in the thread to enter there. The code is sent to
// the caller and nowhere else: never logged.
func (s *Server) postPair(w http.ResponseWriter, r *http.Request) error {
	thread, err := threadOf(r)
	if err != nil {
		return err
	}
	if _, err := readObject(w, r); err != nil {
		return err
	}
	if !s.monitored {
		return &requestError{status: http.StatusConflict, field: "board",
			msg: "no board is configured: there is nobody to pair with on this agent"}
	}
	if err := s.claim(r.Context(), thread); err != nil {
		return err
	}
	b := s.boardOrNil()
	if b == nil {
		return errBoardAway
	}
	ctx, cancel := context.WithTimeout(r.Context(), askWithin)
	defer cancel()
	code, expires, err := b.Pair(ctx, thread)
	var be *agentlink.BoardError
	switch {
	case errors.Is(err, agentlink.ErrNoLink), errors.Is(err, agentlink.ErrLinkDown):
		return errBoardAway
	case errors.Is(err, agentlink.ErrNoAnswer), errors.Is(err, context.DeadlineExceeded):
		return &requestError{status: http.StatusServiceUnavailable, field: "board",
			msg: "the board did not answer in time: try again"}
	case errors.As(err, &be) && be.Code == "failed_precondition":
		return &requestError{status: http.StatusConflict, field: "door",
			msg: "the board does not pair people now: " + be.Message}
	case errors.As(err, &be):
		return &requestError{status: http.StatusBadGateway, field: "board", msg: "the board refused: " + be.Message}
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusOK, PairCode{Thread: thread, Code: code, ExpiresAt: expires.UTC()})
	return nil
}

var errBoardAway = &requestError{status: http.StatusServiceUnavailable, field: "board",
	msg: "the board cannot be reached now: try again"}

// postVerify is POST /api/threads/{thread}/verify with {"who", "secret"}:
// the board checks the address and the secret, and on its yes the person
// is in the thread. No board is {"ok": false, "why": "no board"}, never a
// pass. The secret goes to the board and nowhere else: never logged,
// never kept.
func (s *Server) postVerify(w http.ResponseWriter, r *http.Request) error {
	thread, err := threadOf(r)
	if err != nil {
		return err
	}
	body, err := readObject(w, r, "who", "secret")
	if err != nil {
		return err
	}
	var who, secret string
	for _, f := range []struct {
		name string
		to   *string
	}{{"who", &who}, {"secret", &secret}} {
		raw, ok := body[f.name]
		if !ok {
			return badRequest(f.name, "required")
		}
		if err := json.Unmarshal(raw, f.to); err != nil {
			return badRequest(f.name, "want a string")
		}
	}
	if strings.TrimSpace(who) == "" {
		return badRequest("who", "empty: want the address you have on the board")
	}
	if secret == "" {
		return badRequest("secret", "empty: want the verify secret you set on the board")
	}
	if s.monitored {
		if err := s.claim(r.Context(), thread); err != nil {
			return err
		}
	}
	b := s.boardOrNil()
	if !s.monitored || b == nil {
		writeJSON(w, http.StatusOK, Verified{Why: agentlink.WhyNoBoard})
		return nil
	}
	res := b.Verify(r.Context(), who, secret, 0)
	if !res.OK {
		why := res.Why
		if why == "" {
			why = "not verified"
		}
		writeJSON(w, http.StatusOK, Verified{Why: why})
		return nil
	}
	p := Person{Address: res.Address, Name: res.Name, How: HowVerified, At: s.now().UTC()}
	c, _ := callerFrom(r.Context())
	s.convs.addPerson(r.Context(), thread, p, c.visitor, s.now())
	s.changed(thread)
	writeJSON(w, http.StatusOK, Verified{OK: true, Person: &p})
	return nil
}

// Paired records that a person entered, on the board, the code thread
// showed: they are in the thread, and the visitor who started it is them.
// Give it to agentlink.Config.OnPaired.
func (s *Server) Paired(p agentlink.Paired) {
	ctx := context.Background()
	if validThread(p.Thread) != nil || p.Who == "" {
		s.log.WarnContext(ctx, "a pairing the agent cannot keep", "thread", p.Thread, "pairing", p.ID)
		return
	}
	at := p.At
	if at.IsZero() {
		at = s.now()
	}
	s.convs.addPerson(ctx, p.Thread, Person{Address: p.Who, Name: p.Name, How: HowPaired, At: at}, "", s.now())
	s.changed(p.Thread)
}
