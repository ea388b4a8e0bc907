package agentlink

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// Where a pause, or the end of one, was decided (PauseState.Origin).
const (
	// OriginLocal: on the agent's machine (agent pause, agent resume).
	OriginLocal = "local"
	// OriginBoard: by an operator on the board (a Pause on the link).
	OriginBoard = "board"
)

// The most of a PauseState's reason and by the board keeps, in bytes;
// ReportPause cuts longer ones, at a character's edge.
const (
	MaxPauseReason = 512
	MaxPauseBy     = 256
)

// Pause is the board telling the agent to stop taking new work (Paused),
// or to take it again.
type Pause struct {
	Paused bool
	// Reason: why, in the operator's words.
	Reason string
	// By: the operator's name on the board.
	By string
	// At: when the board decided; zero when it did not say.
	At time.Time
}

func pauseOf(p *boardv1.Pause) Pause {
	out := Pause{Paused: p.GetPaused(), Reason: p.GetReason(), By: p.GetBy()}
	if p.GetTime() != nil {
		out.At = p.GetTime().AsTime()
	}
	return out
}

// PauseState is whether the agent is taking work, as it tells the board.
// A paused agent stays linked and healthy and finishes what it has in
// flight, but refuses new work.
type PauseState struct {
	Paused bool
	// Reason and By: why, and who decided; cut to MaxPauseReason and
	// MaxPauseBy bytes.
	Reason string
	By     string
	// At: when it was decided; zero when it never was.
	At time.Time
	// Origin: OriginLocal, OriginBoard, or "" when it never was decided.
	Origin string
}

// pauseSlot is the newest pause state to tell the board, and its version:
// one more every time ReportPause is called.
type pauseSlot struct {
	mu    sync.Mutex
	state *boardv1.PauseState
	ver   uint64
}

// ReportPause tells the board whether the agent is taking work: at once
// when a link is up, and again after every welcome, so a board that
// restarted or missed it learns it. Call it with the agent's state before
// Run, whenever it changes, and in answer to every Pause (Config.OnPause).
// It never blocks: the newest state is kept, and sent by the link that is
// up, or by the next one. It fails for a Link that did not announce
// CapabilityPause and for an origin it does not know.
func (l *Link) ReportPause(s PauseState) error {
	if l == nil {
		return ErrNoLink
	}
	if !l.announces(CapabilityPause) {
		return fmt.Errorf("agentlink: ReportPause: the hello does not announce %q", CapabilityPause)
	}
	m := &boardv1.PauseState{
		Paused: s.Paused,
		Reason: Clip(s.Reason, MaxPauseReason),
		By:     Clip(s.By, MaxPauseBy),
	}
	if !s.At.IsZero() {
		m.Time = timestamppb.New(s.At)
	}
	switch s.Origin {
	case OriginLocal:
		m.Origin = boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL
	case OriginBoard:
		m.Origin = boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD
	case "":
	default:
		return fmt.Errorf("agentlink: ReportPause: origin %q: want %q, %q or none", s.Origin, OriginLocal, OriginBoard)
	}
	l.pause.mu.Lock()
	l.pause.state = m
	l.pause.ver++
	l.pause.mu.Unlock()
	l.poke()
	return nil
}

// pauseToSend returns the newest pause state when it is newer than the
// version sent, with its version.
func (l *Link) pauseToSend(sent uint64) (*boardv1.PauseState, uint64) {
	l.pause.mu.Lock()
	defer l.pause.mu.Unlock()
	if l.pause.state == nil || l.pause.ver <= sent {
		return nil, sent
	}
	return l.pause.state, l.pause.ver
}

// Clip makes s valid UTF-8, as the link carries it, and cuts it to at
// most max bytes, at a character's edge: for text from elsewhere (a
// person, the board, an error) that must fit a field of the link or of a
// file beside it.
func Clip(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
