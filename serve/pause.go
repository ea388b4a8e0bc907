package serve

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/symphonix/symphonix/pause"
)

// RetryAfterPaused is the Retry-After, in seconds, of a message refused
// because the agent is paused: a guess, since nobody knows when it will
// be resumed; a client asks again then, or tells its person.
const RetryAfterPaused = 60

// Paused is why the agent takes no new work, as the API says it: in a
// refusal, and in GET /api/agent.
type Paused struct {
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at"`
	// Origin: "local" (on the agent's machine) or "board".
	Origin string `json:"origin"`
}

func pausedOf(s pause.State) *Paused {
	if !s.Paused {
		return nil
	}
	return &Paused{Reason: s.Reason, By: s.By, At: s.Time, Origin: s.Origin}
}

// pausedError refuses new work while the agent is paused.
type pausedError struct{ s pause.State }

func (e *pausedError) Error() string {
	msg := "this agent is paused"
	if e.s.Reason != "" {
		msg += ": " + e.s.Reason
	}
	var who []string
	if e.s.By != "" {
		who = append(who, "by "+e.s.By)
	}
	if !e.s.Time.IsZero() {
		who = append(who, "since "+e.s.Time.UTC().Format(time.RFC3339))
	}
	if e.s.Origin == pause.Board {
		who = append(who, "on the board")
	}
	if len(who) > 0 {
		msg += " (" + strings.Join(who, ", ") + ")"
	}
	return msg + "; it finishes what it started, and takes new messages once it is resumed"
}

// paused refuses new work while the agent is paused; nil when it is not.
func (s *Server) paused() error {
	if s.pause == nil {
		return nil
	}
	if st := s.pause(); st.Paused {
		return &pausedError{st}
	}
	return nil
}

// failPaused is the refusal of new work while paused: 503, Retry-After,
// and the pause in the body.
func failPaused(w http.ResponseWriter, e *pausedError) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterPaused))
	writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: e.Error(), Paused: pausedOf(e.s)})
}
