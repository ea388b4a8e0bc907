package board

import (
	"context"
	"fmt"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/conversation"
	"github.com/symphonix/symphonix/ent/pairing"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/ent/verification"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Limits on what one Conversations report may carry, and on what
// ListConversations returns.
const (
	maxConversationThread = maxThreadLen
	maxConversations      = 1000
	maxConversationPeople = 100
	// conversationBatch is how many pointers one upsert statement writes,
	// well inside SQLite's and PostgreSQL's limits on bound parameters.
	conversationBatch = 200
)

// conversations keeps a report of the agent's conversation pointers. A
// report is not answered; a bad one is refused in a LinkError naming the
// field, and the link stays up. Only a failure to send ends the link.
//
// Reports are not audited: they are pointers the agent restates whenever a
// conversation changes, not decisions anybody made, and auditing them
// would grow the log with every turn of every conversation.
func (l linkService) conversations(ctx context.Context, s *session, q *boardv1.Conversations) error {
	if err := l.b.keepConversations(ctx, s.name, q); err != nil {
		return l.answerError(ctx, s, "", "conversations", err)
	}
	return nil
}

// conversationRow is one reported pointer, checked.
type conversationRow struct {
	thread    string
	updatedAt time.Time
	waiting   bool
	people    []string
}

// keepConversations checks a report and keeps it for agentName (the
// link's agent; the agent field of each pointer is ignored): each pointer
// is upserted by (agent, thread), and a full report deletes the agent's
// pointers it does not name. The whole report is one transaction.
func (b *Board) keepConversations(ctx context.Context, agentName string, q *boardv1.Conversations) error {
	rows, err := validConversations(q)
	if err != nil {
		return err
	}
	now := b.now().UTC()
	return store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		if err := vouchedOnly(ctx, tx, agentName, rows); err != nil {
			return err
		}
		for chunk := range slices.Chunk(rows, conversationBatch) {
			creates := make([]*ent.ConversationCreate, len(chunk))
			for i, r := range chunk {
				creates[i] = tx.Conversation.Create().
					SetAgent(agentName).
					SetThread(r.thread).
					SetUpdatedAt(r.updatedAt).
					SetWaiting(r.waiting).
					SetPeople(r.people).
					SetReportedAt(now)
			}
			err := tx.Conversation.CreateBulk(creates...).
				OnConflictColumns(conversation.FieldAgent, conversation.FieldThread).
				Update(func(u *ent.ConversationUpsert) {
					u.UpdateUpdatedAt().UpdateWaiting().UpdatePeople().UpdateReportedAt()
				}).
				Exec(ctx)
			if err != nil {
				return fmt.Errorf("keep conversations: %w", err)
			}
		}
		if !q.GetFull() {
			return nil
		}
		threads := make([]string, len(rows))
		for i, r := range rows {
			threads[i] = r.thread
		}
		_, err := tx.Conversation.Delete().
			Where(conversation.Agent(agentName), conversation.ThreadNotIn(threads...)).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("drop conversations: %w", err)
		}
		return nil
	})
}

// vouchedOnly drops from rows' people everyone the board has not itself
// paired or verified for the agent: an agent's word alone never puts a
// person in a conversation (and so never shows it to them, nor keeps them
// from deciding its approvals).
func vouchedOnly(ctx context.Context, tx *ent.Tx, agentName string, rows []conversationRow) error {
	var named []string
	for _, r := range rows {
		named = append(named, r.people...)
	}
	slices.Sort(named)
	named = slices.Compact(named)
	vouched := make(map[string]bool, len(named))
	for chunk := range slices.Chunk(named, conversationBatch) {
		paired, err := tx.Pairing.Query().
			Where(pairing.Agent(agentName), pairing.EmailIn(chunk...)).
			Select(pairing.FieldEmail).Strings(ctx)
		if err != nil {
			return fmt.Errorf("people paired: %w", err)
		}
		verified, err := tx.Verification.Query().
			Where(verification.Agent(agentName), verification.EmailIn(chunk...)).
			Select(verification.FieldEmail).Strings(ctx)
		if err != nil {
			return fmt.Errorf("people verified: %w", err)
		}
		for _, e := range append(paired, verified...) {
			vouched[e] = true
		}
	}
	for i := range rows {
		rows[i].people = slices.DeleteFunc(rows[i].people, func(e string) bool { return !vouched[e] })
	}
	return nil
}

// validConversations checks a report, naming the field at fault, and
// returns its pointers with their people canonical, sorted and without
// repeats.
func validConversations(q *boardv1.Conversations) ([]conversationRow, error) {
	ps := q.GetConversations()
	if n := len(ps); n > maxConversations {
		return nil, badRequest("conversations.conversations: %d, at most %d", n, maxConversations)
	}
	rows := make([]conversationRow, 0, len(ps))
	seen := make(map[string]int, len(ps))
	for i, p := range ps {
		field := fmt.Sprintf("conversations.conversations[%d]", i)
		if err := validText(p.GetThread(), maxConversationThread, true); err != nil {
			return nil, badRequest("%s.thread: %v", field, err)
		}
		if j, ok := seen[p.GetThread()]; ok {
			return nil, badRequest("%s.thread: %q is conversations[%d] too", field, p.GetThread(), j)
		}
		seen[p.GetThread()] = i
		if p.GetUpdateTime() == nil {
			return nil, badRequest("%s.update_time: required", field)
		}
		if err := p.GetUpdateTime().CheckValid(); err != nil {
			return nil, badRequest("%s.update_time: %v", field, err)
		}
		if n := len(p.GetPeople()); n > maxConversationPeople {
			return nil, badRequest("%s.people: %d, at most %d", field, n, maxConversationPeople)
		}
		people := make([]string, 0, len(p.GetPeople()))
		for k, who := range p.GetPeople() {
			e, err := identity.CanonicalEmail(who)
			if err != nil {
				return nil, badRequest("%s.people[%d]: %s is not an email address", field, k, quoted(who))
			}
			people = append(people, e)
		}
		slices.Sort(people)
		rows = append(rows, conversationRow{
			thread:    p.GetThread(),
			updatedAt: p.GetUpdateTime().AsTime().UTC().Truncate(time.Microsecond),
			waiting:   p.GetWaiting(),
			people:    slices.Compact(people),
		})
	}
	return rows, nil
}

// conversationService is symphonix.board.v1.ConversationService: the
// pointers to the conversations agents hold, each shown only to whoever may
// see it (docs/people.md, "Conversations on the board").
type conversationService struct {
	b *Board
}

var _ boardv1connect.ConversationServiceHandler = conversationService{}

// ListConversations is a page of the pointers the caller may see, most
// recently updated first, then by agent and thread; its token holds the
// last one's time, agent and thread, and is good only for the same agent
// filter and the same caller's view.
func (s conversationService) ListConversations(ctx context.Context, req *boardv1.ListConversationsRequest) (*boardv1.ListConversationsResponse, error) {
	if a := req.GetAgent(); a != "" {
		if err := identity.ValidName(a); err != nil {
			return nil, refusal(connect.CodeInvalidArgument, "agent: %v", err)
		}
	}
	out := &boardv1.ListConversationsResponse{Conversations: []*boardv1.ConversationPointer{}}
	caller, _ := identity.FromContext(ctx)
	var where []predicate.Conversation
	view := ""
	switch {
	case caller.Operates() && caller.Role >= identity.RoleAdmin:
		// An admin sees every pointer.
		view = "all"
	case caller.Kind == identity.KindSession && caller.Name != "":
		// A person sees the conversations they are in.
		view = "person " + caller.Name
		where = append(where, func(s *sql.Selector) {
			s.Where(sqljson.ValueContains(s.C(conversation.FieldPeople), caller.Name))
		})
	}
	pg, err := s.b.page("ListConversations", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 3,
		req.GetAgent(), view)
	if err != nil {
		return nil, err
	}
	if view == "" {
		// A token that is not an admin's is nobody's address: it is in no
		// conversation, so it sees none.
		return out, nil
	}
	if a := req.GetAgent(); a != "" {
		where = append(where, conversation.Agent(a))
	}
	var last *conversationKey
	if pg.after != nil {
		t, err := positionTime(pg.after[0])
		if err != nil {
			return nil, err
		}
		last = &conversationKey{updatedAt: t, agent: pg.after[1], thread: pg.after[2]}
	}
	for {
		q := s.b.db.Conversation.Query().Where(where...)
		if last != nil {
			// After last, in the order below.
			q.Where(conversation.Or(
				conversation.UpdatedAtLT(last.updatedAt),
				conversation.And(conversation.UpdatedAt(last.updatedAt), conversation.Or(
					conversation.AgentGT(last.agent),
					conversation.And(conversation.Agent(last.agent), conversation.ThreadGT(last.thread)),
				)),
			))
		}
		rows, err := q.
			Order(
				conversation.ByUpdatedAt(sql.OrderDesc()),
				conversation.ByAgent(),
				conversation.ByThread(),
			).
			Limit(conversationPage).
			All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			p := conversationProto(r)
			if !pg.take(p, microString(r.UpdatedAt), r.Agent, r.Thread) {
				out.NextPageToken = pg.next()
				return out, nil
			}
			out.Conversations = append(out.Conversations, p)
		}
		if len(rows) < conversationPage {
			return out, nil
		}
		r := rows[len(rows)-1]
		last = &conversationKey{updatedAt: r.UpdatedAt, agent: r.Agent, thread: r.Thread}
	}
}

// conversationKey is a pointer's place in ListConversations' order.
type conversationKey struct {
	updatedAt     time.Time
	agent, thread string
}

// conversationPage is how many pointers ListConversations reads from the
// store at once.
const conversationPage = 200

func conversationProto(r *ent.Conversation) *boardv1.ConversationPointer {
	return &boardv1.ConversationPointer{
		Agent:      r.Agent,
		Thread:     r.Thread,
		UpdateTime: timestamppb.New(r.UpdatedAt),
		Waiting:    r.Waiting,
		People:     append([]string{}, r.People...),
	}
}
