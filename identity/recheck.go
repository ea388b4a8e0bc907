package identity

import (
	"context"
	"fmt"
	"slices"

	"github.com/symphonix/symphonix/ent"
	entsession "github.com/symphonix/symphonix/ent/session"
	"github.com/symphonix/symphonix/ent/token"
	"github.com/symphonix/symphonix/ent/user"
)

// Standing is how a credential checked earlier stands now.
type Standing struct {
	// Role: for a session, its person's role now; otherwise the caller's.
	Role Role
	// Err: why the credential no longer holds; nil while it does.
	Err error
}

// recheckChunk bounds the ids in one query.
const recheckChunk = 500

// Recheck checks again the credentials callers authenticated with earlier
// — operator and agent tokens and sessions alike — so that what they hold
// open (a stream) ends when they no longer would be let in. It takes a few
// queries whatever the number of callers. For each caller, in order, Err
// is why it no longer holds: ErrExpired; ErrRevoked or ErrUnknownToken for
// a token; ErrSessionEnded (signed out, or the row gone) or ErrUserDisabled
// (the person disabled or gone) for a session. A session's Role is its
// person's now, so that a person whose role was lowered can be told. The
// error returned is the store's; the standings are then nil.
func (ss *Sessions) Recheck(ctx context.Context, callers []Caller) ([]Standing, error) {
	now := ss.now()
	out := make([]Standing, len(callers))
	var tokenIDs, sessionIDs []string
	for i, c := range callers {
		out[i].Role = c.Role
		switch {
		case !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt):
			out[i].Err = ErrExpired
		case c.Kind == KindSession:
			sessionIDs = append(sessionIDs, c.TokenID)
		default:
			tokenIDs = append(tokenIDs, c.TokenID)
		}
	}
	tokens := make(map[string]*ent.Token)
	for ids := range slices.Chunk(dedup(tokenIDs), recheckChunk) {
		rows, err := ss.db.Token.Query().Where(token.IDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("recheck tokens: %w", err)
		}
		for _, r := range rows {
			tokens[r.ID] = r
		}
	}
	sessions := make(map[string]*ent.Session)
	var userIDs []string
	for ids := range slices.Chunk(dedup(sessionIDs), recheckChunk) {
		rows, err := ss.db.Session.Query().Where(entsession.IDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("recheck sessions: %w", err)
		}
		for _, r := range rows {
			sessions[r.ID] = r
			userIDs = append(userIDs, r.UserID)
		}
	}
	users := make(map[string]*ent.User)
	for ids := range slices.Chunk(dedup(userIDs), recheckChunk) {
		rows, err := ss.db.User.Query().Where(user.IDIn(ids...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("recheck people: %w", err)
		}
		for _, r := range rows {
			users[r.ID] = r
		}
	}
	for i, c := range callers {
		if out[i].Err != nil {
			continue
		}
		if c.Kind != KindSession {
			switch t := tokens[c.TokenID]; {
			case t == nil:
				out[i].Err = ErrUnknownToken
			case t.RevokedAt != nil:
				out[i].Err = ErrRevoked
			}
			continue
		}
		s := sessions[c.TokenID]
		switch {
		case s == nil, s.EndedAt != nil:
			out[i].Err = ErrSessionEnded
			continue
		case !now.Before(s.ExpiresAt):
			out[i].Err = ErrExpired
			continue
		}
		u := users[s.UserID]
		if u == nil || u.Disabled {
			out[i].Err = ErrUserDisabled
			continue
		}
		role, err := ParseRole(u.Role)
		if err != nil {
			out[i].Err = fmt.Errorf("%w: role", ErrBadToken)
			continue
		}
		out[i].Role = role
	}
	return out, nil
}

// dedup is ids sorted, without repeats.
func dedup(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}
