package board

import (
	"errors"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// sent records what a linkOut sends, by kind.
type sent []string

func (s *sent) Send(m *boardv1.LinkResponse) error {
	*s = append(*s, string(m.ProtoReflect().WhichOneof(m.ProtoReflect().Descriptor().Oneofs().ByName("kind")).Name()))
	return nil
}

func decisionMsg() *boardv1.LinkResponse {
	return &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Decision{Decision: &boardv1.ApprovalDecision{}}}
}

// TestLinkOutHoldsPushesUntilCaughtUp: a decision pushed while the link
// catches up goes out after the catch-up, so the agent hears its switches
// first; once caught up, pushes go straight out.
func TestLinkOutHoldsPushesUntilCaughtUp(t *testing.T) {
	var got sent
	o := newLinkOut(&got)
	if err := o.push(decisionMsg()); !errors.Is(err, errLinkNotOpen) {
		t.Fatalf("push before the welcome = %v, want errLinkNotOpen", err)
	}
	if err := o.welcome(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{}}}); err != nil {
		t.Fatal(err)
	}
	if err := o.push(decisionMsg()); err != nil {
		t.Fatalf("push during the catch-up: %v", err)
	}
	if err := o.send(switchesMessage(&boardv1.Switches{})); err != nil {
		t.Fatal(err)
	}
	if err := o.catchUpDone(); err != nil {
		t.Fatal(err)
	}
	if err := o.push(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Paired{Paired: &boardv1.Paired{}}}); err != nil {
		t.Fatal(err)
	}
	want := "welcome switches decision paired"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("sent %q, want %q", g, want)
	}
	o.close()
	if err := o.push(decisionMsg()); !errors.Is(err, errLinkNotOpen) {
		t.Errorf("push after close = %v, want errLinkNotOpen", err)
	}
}

// TestLinkOutOverrun: a link holds at most maxHeld pushes during its
// catch-up; one more is errOverrun, which ends the link (the agent links
// again and catches up on everything).
func TestLinkOutOverrun(t *testing.T) {
	var got sent
	o := newLinkOut(&got)
	if err := o.welcome(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{}}}); err != nil {
		t.Fatal(err)
	}
	for i := range maxHeld {
		if err := o.push(decisionMsg()); err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
	}
	if err := o.push(decisionMsg()); !errors.Is(err, errOverrun) {
		t.Fatalf("push %d = %v, want errOverrun", maxHeld, err)
	}
	if len(got) != 1 {
		t.Errorf("sent %d messages before the catch-up ended, want only the welcome", len(got))
	}
}
