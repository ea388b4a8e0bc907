package board

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/user"
	"github.com/symphonix/symphonix/ent/verification"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// notVerified is why a verify failed, whatever was wrong about the person
// or the secret: unknown, disabled, no verify secret, or the wrong one. The
// same words, and about the same time, so the answer tells nobody which.
const notVerified = "not verified"

// maxVerifyWho and maxVerifySecret bound what a verify may carry.
const (
	maxVerifyWho    = 320
	maxVerifySecret = identity.MaxPasswordBytes
)

// verify answers a verify. Only a failure to send ends the link.
func (l linkService) verify(ctx context.Context, s *session, q *boardv1.Verify) error {
	v, err := l.b.verify(ctx, s.name, q)
	if err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "verify", err)
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Verified{Verified: v}})
}

// verify says who somebody is: the address they gave and the secret they
// typed, checked against the verify secret they set on the board. Answered
// only when the board's door is verify. Limited per address (failures)
// and per agent (all verifies); audited as "verify.ok" or "verify.fail",
// never with the secret.
func (b *Board) verify(ctx context.Context, agentName string, q *boardv1.Verify) (*boardv1.Verified, error) {
	if err := validRequestID(q.GetRequestId()); err != nil {
		return nil, badRequest("verify.request_id: %v", err)
	}
	if n := len(q.GetWho()); n > maxVerifyWho {
		return nil, badRequest("verify.who: %d bytes, at most %d", n, maxVerifyWho)
	}
	if n := len(q.GetSecret()); n > maxVerifySecret {
		return nil, badRequest("verify.secret: %d bytes, at most %d", n, maxVerifySecret)
	}
	out := &boardv1.Verified{RequestId: q.GetRequestId()}
	if ok, retry := b.mayAudit(ctx, "verify"); !ok {
		out.Why = b.tooManyAudited(retry) // not audited: counted and summarised
		return out, nil
	}
	who, whoErr := identity.CanonicalEmail(q.GetWho())
	if whoErr != nil {
		who = q.GetWho() // counted and audited as given; never a person
	}
	fail := func(why, reason string) (*boardv1.Verified, error) {
		b.audited(ctx, "verify.fail", map[string]any{"agent": agentName, "who": who, "reason": reason}, agentName)
		out.Why = why
		return out, nil
	}
	door, err := b.door(ctx)
	if err != nil {
		return nil, err
	}
	if door != DoorVerify {
		return fail(fmt.Sprintf("the board does not verify people: its door is %q", door), "door")
	}
	lim := b.limits()
	if wait, full := lim.byAgent.blocked(ctx, agentName); full {
		return fail(fmt.Sprintf("too many verifies from this agent: try again in %s", roundUp(wait)), "agent limit")
	}
	lim.byAgent.fail(ctx, agentName)
	// The check and the count are one step (take, then done), so verifies
	// of one address at once cannot check more secrets than the limit.
	wait, ok := lim.failsByWho.take(ctx, who)
	if !ok {
		return fail(fmt.Sprintf("too many failed tries for this address: try again in %s", roundUp(wait)), "address limit")
	}
	wrong := false
	defer func() { lim.failsByWho.done(ctx, who, wrong) }()
	var u *ent.User
	if whoErr == nil {
		u, err = b.db.User.Query().Where(user.Email(who)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return nil, err
		}
	}
	hash, reason := "", "unknown person"
	switch {
	case u == nil:
	case u.Disabled:
		reason = "disabled"
	case u.VerifyHash == "":
		reason = "no verify secret"
	default:
		hash, reason = u.VerifyHash, "wrong secret"
	}
	// An empty hash is checked against a dummy: as long as a real check.
	release, free := b.hashSlots.try()
	if !free {
		return nil, &linkRequestError{code: connect.CodeUnavailable, msg: "verify: " + hashBusy}
	}
	matched := identity.PasswordMatches(hash, q.GetSecret())
	release()
	if !matched || hash == "" {
		wrong = true
		return fail(notVerified, reason)
	}
	if err := b.verified(ctx, agentName, u); err != nil {
		return nil, err
	}
	out.Ok, out.Address, out.Name = true, u.Email, u.Name
	return out, nil
}

// verified records that the board verified u for the agent, and audits
// "verify.ok", in one transaction: the record is what lets the agent's
// conversation pointers name u (keepConversations).
func (b *Board) verified(ctx context.Context, agentName string, u *ent.User) error {
	ctx = context.WithoutCancel(ctx)
	now := b.now().UTC().Truncate(time.Microsecond)
	return store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		err := tx.Verification.Create().
			SetAgent(agentName).SetEmail(u.Email).SetUserID(u.ID).SetAt(now).
			OnConflictColumns(verification.FieldAgent, verification.FieldEmail).
			UpdateUserID().UpdateAt().
			Exec(ctx)
		if err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: agentName, Action: "verify.ok",
			Detail: map[string]any{"agent": agentName, "who": u.Email, "user_id": u.ID}, At: now,
		})
		return err
	})
}

// audited appends an entry of its own for what happened; a failure to
// write it is logged.
func (b *Board) audited(ctx context.Context, action string, detail map[string]any, actor string) {
	err := b.audit.AppendNow(context.WithoutCancel(ctx), audit.Record{
		Actor: actor, Action: action, Detail: detail, At: b.now().UTC().Truncate(time.Microsecond),
	})
	if err != nil {
		b.log.ErrorContext(ctx, "audit", "action", action, "err", err.Error())
	}
}
