package agentlink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// ConversationPointer is where one of the agent's conversations is and who
// is in it: never a word of what was said.
type ConversationPointer struct {
	// Thread: required.
	Thread string
	// Updated: required; when the conversation last changed.
	Updated time.Time
	// Waiting: a run on the thread waits for an answer.
	Waiting bool
	// People: the canonical addresses of the people in it, paired or
	// verified.
	People []string
}

// The bounds of one Conversations message: a board takes at most 1,000
// pointers in one, and no message over 1 MiB.
const (
	reportMaxPointers = 1000
	reportMaxBytes    = 512 << 10
)

// ReportConversations tells the board where this agent's conversations
// are. full says pointers is every conversation the agent holds, so the
// board forgets any it has that are not among them; otherwise they are
// the ones that changed. A report is not answered: it returns once sent.
// A report too large for one message is sent as several, the first
// marked full and the rest not, which leaves the board with all of them.
// With no link up (or a nil Link) it returns ErrNoLink; a full report is
// due again whenever the link comes up.
func (l *Link) ReportConversations(ctx context.Context, pointers []ConversationPointer, full bool) error {
	c := l.currentOrNil()
	if c == nil {
		return ErrNoLink
	}
	msgs, err := conversationReports(pointers, full)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Conversations{Conversations: m}}); err != nil {
			return fmt.Errorf("report conversations: %w", err)
		}
	}
	return nil
}

// conversationReports is the messages a report is sent in: pointers in
// order, at most reportMaxPointers and about reportMaxBytes in each, the
// first full when the report is. A full report of nothing is one empty
// message: the agent holds no conversations.
func conversationReports(pointers []ConversationPointer, full bool) ([]*boardv1.Conversations, error) {
	var (
		out  []*boardv1.Conversations
		cur  = &boardv1.Conversations{Full: full}
		size int
	)
	for i, p := range pointers {
		switch {
		case p.Thread == "":
			return nil, fmt.Errorf("report conversations: pointer %d: no thread", i)
		case p.Updated.IsZero():
			return nil, fmt.Errorf("report conversations: pointer %d (%s): no time it was updated", i, p.Thread)
		}
		cp := &boardv1.ConversationPointer{
			Thread:     p.Thread,
			UpdateTime: timestamppb.New(p.Updated),
			Waiting:    p.Waiting,
			People:     p.People,
		}
		n := proto.Size(cp) + 8
		if n > reportMaxBytes {
			return nil, fmt.Errorf("report conversations: pointer %d (%s): %d bytes: %w", i, p.Thread, n, errPointerTooLarge)
		}
		if len(cur.Conversations) == reportMaxPointers || (len(cur.Conversations) > 0 && size+n > reportMaxBytes) {
			out = append(out, cur)
			cur, size = &boardv1.Conversations{}, 0
		}
		cur.Conversations = append(cur.Conversations, cp)
		size += n
	}
	if len(cur.Conversations) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	if len(out) == 1 && !full && len(out[0].Conversations) == 0 {
		return nil, nil // a delta of nothing is not sent
	}
	return out, nil
}

var errPointerTooLarge = errors.New("too large for a message")
