package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/ent/predicate"
)

// Query picks entries of the log for Find. Its zero value is every
// chained entry, oldest first.
type Query struct {
	// AfterSeq: only entries with a seq above it.
	AfterSeq int64
	// BeforeSeq: only entries with a seq below it; 0 for no bound.
	BeforeSeq int64
	// Actor: only entries by this actor, exactly; "" for any.
	Actor string
	// Action: only entries with this action, exactly, or, when it ends
	// with ".", every action it begins; "" for any.
	Action string
	// Subject: only entries about this subject, exactly; "" for any.
	Subject string
	// Since: only entries written at or after it; zero for no bound.
	Since time.Time
	// Until: only entries written before it; zero for no bound.
	Until time.Time
	// Newest: newest first (seq descending) instead of oldest first.
	Newest bool
	// Limit: at most this many; zero or less means 100, more than 1000
	// means 1000.
	Limit int
}

// Find returns the chained entries q picks, in seq order (descending when
// q.Newest). The store does the picking: Find reads no entry it does not
// return. Like List, it first chains what is waiting.
func (a *Log) Find(ctx context.Context, q Query) ([]Entry, error) {
	_ = a.Sequence(ctx) // a read-only store cannot be sequenced: list what is chained
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	where := []predicate.AuditEntry{auditentry.SeqNotNil(), auditentry.SeqGT(q.AfterSeq)}
	if q.BeforeSeq > 0 {
		where = append(where, auditentry.SeqLT(q.BeforeSeq))
	}
	if q.Actor != "" {
		where = append(where, auditentry.Actor(q.Actor))
	}
	switch {
	case strings.HasSuffix(q.Action, "."):
		where = append(where, auditentry.ActionHasPrefix(q.Action))
	case q.Action != "":
		where = append(where, auditentry.Action(q.Action))
	}
	if q.Subject != "" {
		where = append(where, auditentry.Subject(q.Subject))
	}
	if !q.Since.IsZero() {
		where = append(where, auditentry.AtGTE(q.Since.UTC()))
	}
	if !q.Until.IsZero() {
		where = append(where, auditentry.AtLT(q.Until.UTC()))
	}
	order := ent.Asc(auditentry.FieldSeq)
	if q.Newest {
		order = ent.Desc(auditentry.FieldSeq)
	}
	rows, err := a.db.AuditEntry.Query().Where(where...).Order(order).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: find: %w", err)
	}
	out := make([]Entry, len(rows))
	for i, row := range rows {
		out[i] = entryOf(row)
	}
	return out, nil
}
