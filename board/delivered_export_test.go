package board

import (
	"context"
	"strings"
)

// WaitDeliveredMarksForTest returns when the delivered marks of the
// decisions sent so far are written.
func (b *Board) WaitDeliveredMarksForTest() { b.deliveries.marks.wait() }

// MarkDeliveredForTest records that the decision on id went out to
// agentName, as a push on its link does.
func (b *Board) MarkDeliveredForTest(agentName, id string) { b.markDelivered(agentName, id) }

// MarkPendingForTest reports whether the delivered mark of id is waiting
// to be written.
func (b *Board) MarkPendingForTest(agentName, id string) bool {
	return b.deliveries.marks.of(agentName)[id]
}

// ActionLinkForTest is the action link token for person to decide the
// approval id, as a notification carries it.
func (b *Board) ActionLinkForTest(person, id string) string {
	row, err := b.db.Approval.Get(context.Background(), id)
	if err != nil {
		panic(err)
	}
	u, _, err := b.actionLink(person, row, b.now().UTC())
	if err != nil {
		panic(err)
	}
	_, token, _ := strings.Cut(u, "#act/")
	return token
}
