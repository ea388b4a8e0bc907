package agentlink

import (
	"context"
	"errors"
	"fmt"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// The doors a board may want people identified by (HowToIdentify).
const (
	// DoorPairing: show a code from Pair in the conversation; the person
	// enters it on the board while signed in, and OnPaired says who.
	DoorPairing = "pairing"
	// DoorVerify: ask the person who they are and check it with Verify.
	DoorVerify = "verify"
	// DoorNone: the board does not identify people.
	DoorNone = "none"
)

// DefaultVerifyWithin is how long Verify waits for the board when it is
// given no time limit.
const DefaultVerifyWithin = 5 * time.Second

// Why a Verify did not pass, when it was not the board's own answer.
const (
	// WhyNoBoard: no board is configured, or no link to it is up.
	WhyNoBoard = "no board"
	// WhyNoAnswer: the board did not answer within the time limit.
	WhyNoAnswer = "the board did not answer in time"
)

// VerifyResult is what Verify found: OK with the person's canonical
// address and name, or not OK and why.
type VerifyResult struct {
	OK      bool
	Address string
	Name    string
	Why     string
}

// Paired is a conversation linked to a person: they entered, on the board,
// the code it showed. It says who entered it, and nothing else.
type Paired struct {
	// ID: the pairing's id on the board; OnPaired sees each once.
	ID     string
	Thread string
	// Who: the person's canonical address; Name: their name.
	Who  string
	Name string
	At   time.Time
}

// HowToIdentify asks the board which door it wants: DoorPairing,
// DoorVerify or DoorNone. With no link up it returns ErrNoLink.
func (l *Link) HowToIdentify(ctx context.Context) (string, error) {
	c := l.currentOrNil()
	if c == nil {
		return "", ErrNoLink
	}
	m, err := l.request(ctx, c, func(id string) *boardv1.LinkRequest {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_HowToIdentify{HowToIdentify: &boardv1.HowToIdentify{
			RequestId: id,
		}}}
	})
	if err != nil {
		return "", fmt.Errorf("how_to_identify: %w", err)
	}
	a := m.GetHowToIdentifyAnswer()
	if a == nil {
		return "", errors.New("how_to_identify: the board answered with something else")
	}
	return doorOf(a.GetDoor()), nil
}

// Pair asks the board for a code to show in the conversation thread, and
// when it stops working. A new code replaces the thread's earlier one. The
// board refuses (a *BoardError, failed_precondition) when its door is not
// pairing. With no link up it returns ErrNoLink.
func (l *Link) Pair(ctx context.Context, thread string) (code string, expires time.Time, err error) {
	c := l.currentOrNil()
	if c == nil {
		return "", time.Time{}, ErrNoLink
	}
	m, err := l.request(ctx, c, func(id string) *boardv1.LinkRequest {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pair{Pair: &boardv1.Pair{
			RequestId: id, Thread: thread,
		}}}
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("pair %q: %w", thread, err)
	}
	a := m.GetPairCode()
	if a == nil || a.GetCode() == "" {
		return "", time.Time{}, fmt.Errorf("pair %q: the board answered with something else", thread)
	}
	return a.GetCode(), a.GetExpireTime().AsTime(), nil
}

// Verify asks the board who somebody is: the address they gave and the
// secret they typed. It passes only on the board's own yes: no board (a
// nil Link, or no link up) is WhyNoBoard, silence past within (zero means
// DefaultVerifyWithin) is WhyNoAnswer, and anything else that is not a
// clear yes is a no. Never a pass.
func (l *Link) Verify(ctx context.Context, who, secret string, within time.Duration) VerifyResult {
	c := l.currentOrNil()
	if c == nil {
		return VerifyResult{Why: WhyNoBoard}
	}
	if within <= 0 {
		within = DefaultVerifyWithin
	}
	m, err := l.requestWithin(ctx, c, within, func(id string) *boardv1.LinkRequest {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Verify{Verify: &boardv1.Verify{
			RequestId: id, Who: who, Secret: secret,
		}}}
	})
	var be *BoardError
	switch {
	case errors.Is(err, ErrNoAnswer):
		return VerifyResult{Why: WhyNoAnswer}
	case errors.Is(err, ErrLinkDown), errors.Is(err, ErrNoLink):
		return VerifyResult{Why: WhyNoBoard}
	case errors.As(err, &be):
		return VerifyResult{Why: "the board refused: " + be.Message}
	case err != nil:
		return VerifyResult{Why: err.Error()}
	}
	v := m.GetVerified()
	switch {
	case v == nil:
		return VerifyResult{Why: "the board answered with something else"}
	case !v.GetOk():
		why := v.GetWhy()
		if why == "" {
			why = "not verified"
		}
		return VerifyResult{Why: why}
	case v.GetAddress() == "":
		return VerifyResult{Why: "the board said yes without saying who"}
	}
	return VerifyResult{OK: true, Address: v.GetAddress(), Name: v.GetName()}
}

// currentOrNil is the link that is up now; nil for none or a nil Link (no
// board configured).
func (l *Link) currentOrNil() *conn {
	if l == nil {
		return nil
	}
	return l.current()
}

// paired passes p to OnPaired, once per pairing.
func (l *Link) paired(p Paired) {
	l.pairedMu.Lock()
	defer l.pairedMu.Unlock()
	if _, seen := l.pairings.get(p.ID); seen {
		return
	}
	l.pairings.put(p.ID, struct{}{})
	if l.cfg.OnPaired != nil {
		l.cfg.OnPaired(p)
	}
}

func pairedOf(p *boardv1.Paired) Paired {
	out := Paired{ID: p.GetId(), Thread: p.GetThread(), Who: p.GetWho(), Name: p.GetName()}
	if p.GetPairTime() != nil {
		out.At = p.GetPairTime().AsTime()
	}
	return out
}
