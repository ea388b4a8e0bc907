package board

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unicode"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/paircode"
	"github.com/symphonix/symphonix/ent/pairing"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Pairing codes (docs/pairing.md).
const (
	// pairAlphabet is the symbols of a code: digits and capital letters
	// without the look-alikes 0/O, 1/I/L and U/V. 30 symbols, so a code of
	// pairCodeLen carries 30^8 ≈ 2^39 possibilities.
	pairAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
	pairCodeLen  = 8
	// PairCodeLife is how long a code works.
	PairCodeLife = 10 * time.Minute
	// wrongPerCode is how many near misses kill a code (wrongCode).
	wrongPerCode = 5
	// maxCodeInput bounds what EnterPairingCode reads.
	maxCodeInput = 64
	// pairAttempts is how often a pair is tried when a fresh code's hash
	// collided with a live one.
	pairAttempts = 3
)

// errNoSuchCode: the code entered is unknown, used, expired or dead. The
// person is told only "invalid or expired code", whichever it was.
var errNoSuchCode = errors.New("invalid or expired code")

// newPairCode is a fresh code: pairCodeLen symbols from pairAlphabet, each
// uniform (a random byte is used only below the largest multiple of the
// alphabet's size).
func newPairCode() (string, error) {
	const n = len(pairAlphabet)
	const below = 256 / n * n
	out := make([]byte, 0, pairCodeLen)
	var buf [2 * pairCodeLen]byte
	for len(out) < pairCodeLen {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("pairing code: %w", err)
		}
		for _, c := range buf {
			if int(c) < below && len(out) < pairCodeLen {
				out = append(out, pairAlphabet[int(c)%n])
			}
		}
	}
	return string(out), nil
}

// normalPairCode is a code as typed in its one form: upper case, without
// dashes and white space.
func normalPairCode(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
}

// wellFormedPairCode reports whether a normal code could have been issued.
func wellFormedPairCode(s string) bool {
	if len(s) != pairCodeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(pairAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// pairCodeHash is what the store keeps of a normal code.
func pairCodeHash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// nearMisses is the hashes of every code one symbol away from a
// well-formed code: the codes a near miss was probably meant for.
func nearMisses(code string) []string {
	out := make([]string, 0, pairCodeLen*(len(pairAlphabet)-1))
	b := []byte(code)
	for i := range b {
		orig := b[i]
		for j := 0; j < len(pairAlphabet); j++ {
			if pairAlphabet[j] == orig {
				continue
			}
			b[i] = pairAlphabet[j]
			out = append(out, pairCodeHash(string(b)))
		}
		b[i] = orig
	}
	return out
}

func newRandomID(prefix string) (string, error) {
	p := make([]byte, 12)
	if _, err := rand.Read(p); err != nil {
		return "", fmt.Errorf("%s id: %w", prefix, err)
	}
	return prefix + hex.EncodeToString(p), nil
}

// pair answers a pair. Only a failure to send ends the link.
func (l linkService) pair(ctx context.Context, s *session, q *boardv1.Pair) error {
	code, expires, err := l.b.pairCode(ctx, s.name, q)
	if err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "pair", err)
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_PairCode{PairCode: &boardv1.PairCode{
		RequestId: q.GetRequestId(), Code: code, ExpireTime: timestamppb.New(expires),
	}}})
}

// pairCode issues a code for the agent's thread, replacing any code the
// thread had: one live code per (agent, thread). Refused unless the
// board's door is pairing. Audited as "pair.code", never with the code.
func (b *Board) pairCode(ctx context.Context, agentName string, q *boardv1.Pair) (string, time.Time, error) {
	if err := validRequestID(q.GetRequestId()); err != nil {
		return "", time.Time{}, badRequest("pair.request_id: %v", err)
	}
	if err := validText(q.GetThread(), maxThreadLen, true); err != nil {
		return "", time.Time{}, badRequest("pair.thread: %v", err)
	}
	door, err := b.door(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	if door != DoorPairing {
		return "", time.Time{}, &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: fmt.Sprintf("pair: the board's door is %q, not %q: ask how_to_identify", door, DoorPairing)}
	}
	if ok, retry := b.mayAudit(ctx, "pair.code"); !ok {
		return "", time.Time{}, b.auditLimited("pair", retry)
	}
	for attempt := 1; ; attempt++ {
		code, expires, err := b.pairCodeOnce(ctx, agentName, q.GetThread())
		if ent.IsConstraintError(err) && attempt < pairAttempts {
			continue // the hash of a live code: draw again
		}
		return code, expires, err
	}
}

func (b *Board) pairCodeOnce(ctx context.Context, agentName, thread string) (string, time.Time, error) {
	code, err := newPairCode()
	if err != nil {
		return "", time.Time{}, err
	}
	id, err := newRandomID("pc-")
	if err != nil {
		return "", time.Time{}, err
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	expires := now.Add(PairCodeLife)
	err = store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		// The thread's earlier code stops working; and codes past their
		// time are swept while we are here.
		replaced, err := tx.PairCode.Delete().
			Where(paircode.Agent(agentName), paircode.Thread(thread)).
			Exec(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.PairCode.Delete().Where(paircode.ExpiresAtLT(now)).Exec(ctx); err != nil {
			return err
		}
		err = tx.PairCode.Create().
			SetID(id).
			SetCodeHash(pairCodeHash(code)).
			SetAgent(agentName).
			SetThread(thread).
			SetCreatedAt(now).
			SetExpiresAt(expires).
			Exec(ctx)
		if err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: agentName, Action: "pair.code", Subject: id,
			Detail: map[string]any{
				"agent": agentName, "thread": thread, "replaced": replaced,
				"expires_at": expires.Format(time.RFC3339Nano),
			},
			At: now,
		})
		return err
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return code, expires, nil
}

// enterPairingCode is UserService.EnterPairingCode: a signed-in person
// enters the code a conversation showed, and the conversation is linked
// to them. A code links a thread to the person who entered it; it proves
// nothing else.
func (b *Board) enterPairingCode(ctx context.Context, req *boardv1.EnterPairingCodeRequest) (*boardv1.EnterPairingCodeResponse, error) {
	caller, _ := identity.FromContext(ctx)
	if caller.Kind != identity.KindSession || caller.UserID == "" {
		// A code links a thread to a person the board knows, and a token
		// is not a person.
		return nil, refusal(connect.CodePermissionDenied, "permission denied: a pairing code is entered by a signed-in person, not with a token")
	}
	lim := b.limits()
	// One person's entries one at a time, so their limit is exact.
	unlock := lim.entering.lock(caller.UserID)
	defer unlock()
	if wait, full := lim.wrongByPerson.blocked(ctx, caller.UserID); full {
		return nil, refusal(connect.CodeResourceExhausted, "too many wrong codes: try again in %s", roundUp(wait))
	}
	if wait, full := lim.wrongOverall.blocked(ctx, ""); full {
		return nil, refusal(connect.CodeResourceExhausted, "too many wrong codes on this board: try again in %s", roundUp(wait))
	}
	door, err := b.door(ctx)
	if err != nil {
		return nil, err
	}
	if door != DoorPairing {
		return nil, refusal(connect.CodeFailedPrecondition, "the board does not pair conversations now: its door is %q", door)
	}
	code := req.GetCode()
	if len(code) > maxCodeInput {
		code = code[:maxCodeInput]
	}
	code = normalPairCode(code)
	p, err := b.redeem(ctx, caller, code)
	if errors.Is(err, errNoSuchCode) {
		b.wrongCode(ctx, caller, code)
		return nil, refusal(connect.CodeInvalidArgument, "code: %v", errNoSuchCode)
	}
	if err != nil {
		return nil, err
	}
	b.deliverPairing(ctx, p.Agent, p.ID)
	return &boardv1.EnterPairingCodeResponse{Agent: p.Agent, Thread: p.Thread}, nil
}

// roundUp is d to the next whole second, for a person to read.
func roundUp(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// redeem uses the code for the caller: marks it used, stores the pairing
// and audits "pair.enter", in one transaction. Of two entries of one code
// at the same moment exactly one wins: the code is marked used through an
// UPDATE … WHERE used_at IS NULL whose row count is checked.
func (b *Board) redeem(ctx context.Context, caller identity.Caller, code string) (*ent.Pairing, error) {
	if !wellFormedPairCode(code) {
		return nil, errNoSuchCode
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	var out *ent.Pairing
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		u, err := tx.User.Get(ctx, caller.UserID)
		if ent.IsNotFound(err) || (err == nil && u.Disabled) {
			return refusal(connect.CodePermissionDenied, "permission denied")
		}
		if err != nil {
			return err
		}
		pc, err := tx.PairCode.Query().Where(paircode.CodeHash(pairCodeHash(code))).Only(ctx)
		if ent.IsNotFound(err) {
			return errNoSuchCode
		}
		if err != nil {
			return err
		}
		n, err := tx.PairCode.Update().
			Where(paircode.ID(pc.ID), paircode.UsedAtIsNil(), paircode.ExpiresAtGT(now), paircode.WrongTriesLT(wrongPerCode)).
			SetUsedAt(now).
			Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errNoSuchCode // used, expired, dead, or used a moment ago
		}
		id, err := newRandomID("pr-")
		if err != nil {
			return err
		}
		out, err = tx.Pairing.Create().
			SetID(id).
			SetAgent(pc.Agent).
			SetThread(pc.Thread).
			SetUserID(u.ID).
			SetEmail(u.Email).
			SetName(u.Name).
			SetCreatedAt(now).
			Save(ctx)
		if err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: caller.Name, Action: "pair.enter", Subject: id,
			Detail: map[string]any{
				"agent": pc.Agent, "thread": pc.Thread, "who": u.Email, "user_id": u.ID,
				"code_id": pc.ID, "source": peerOf(ctx),
			},
			At: now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// wrongCode counts a refused code against the person, the board, and every
// live code one symbol away from it (a near miss: a typo, or a guess by
// somebody who saw most of a code), and audits "pair.wrong" — never with
// the code. A code with wrongPerCode near misses is dead.
func (b *Board) wrongCode(ctx context.Context, caller identity.Caller, code string) {
	lim := b.limits()
	lim.wrongByPerson.fail(ctx, caller.UserID)
	lim.wrongOverall.fail(ctx, "")
	ctx = context.WithoutCancel(ctx)
	now := b.now().UTC().Truncate(time.Microsecond)
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		detail := map[string]any{"who": caller.Name, "user_id": caller.UserID, "source": peerOf(ctx)}
		if wellFormedPairCode(code) {
			near, err := tx.PairCode.Query().
				Where(paircode.CodeHashIn(nearMisses(code)...), paircode.UsedAtIsNil(), paircode.ExpiresAtGT(now)).
				IDs(ctx)
			if err != nil {
				return err
			}
			if len(near) > 0 {
				if err := tx.PairCode.Update().Where(paircode.IDIn(near...)).AddWrongTries(1).Exec(ctx); err != nil {
					return err
				}
				detail["near"] = near
			}
		}
		err := b.audit.Append(ctx, tx, audit.Record{
			Actor: caller.Name, Action: "pair.wrong", Detail: detail, At: now,
		})
		return err
	})
	if err != nil {
		b.log.ErrorContext(ctx, "count a wrong pairing code", "who", caller.Name, "err", err.Error())
	}
}

// peerOf is the address a call came from, or "": the peer, never a
// header a client can write.
func peerOf(ctx context.Context) string {
	info, ok := connect.CallInfoForServerContext(ctx)
	if !ok {
		return ""
	}
	host, _, err := net.SplitHostPort(info.PeerAddr)
	if err != nil {
		return info.PeerAddr
	}
	return host
}

// pairedMessage is the pairing as the agent is told it.
func pairedMessage(p *ent.Pairing) *boardv1.LinkResponse {
	return &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Paired{Paired: &boardv1.Paired{
		Id: p.ID, Thread: p.Thread, Who: p.Email, Name: p.Name, PairTime: timestamppb.New(p.CreatedAt),
	}}}
}

// deliverPairing pushes the pairing id to its agent's live link, if it
// has one here and the pairing has not reached it, and marks it delivered
// when the send succeeded. One not delivered now goes out when the agent
// next links (deliverPairings).
func (b *Board) deliverPairing(ctx context.Context, agentName, id string) {
	unlock := b.identify.pairings.lock(agentName)
	defer unlock()
	ctx = context.WithoutCancel(ctx)
	row, err := b.db.Pairing.Get(ctx, id)
	if err != nil {
		b.log.ErrorContext(ctx, "read a pairing to deliver", "pairing", id, "err", err.Error())
		return
	}
	if row.DeliveredAt != nil {
		return
	}
	if !b.presence.sendLive(agentName, pairedMessage(row)) {
		return
	}
	b.markPaired(ctx, agentName, id)
}

// deliverPairings sends every pairing of the agent's that has not reached
// it, oldest first, with send (the session's send for one that has just
// been welcomed, its push for one another board woke), and marks those
// that went out delivered. It stops at the first failed send: the
// rest go out on the next link.
func (b *Board) deliverPairings(ctx context.Context, s *session, send func(*boardv1.LinkResponse) error) {
	unlock := b.identify.pairings.lock(s.name)
	defer unlock()
	rows, err := b.db.Pairing.Query().
		Where(pairing.Agent(s.name), pairing.DeliveredAtIsNil()).
		Order(ent.Asc(pairing.FieldCreatedAt), ent.Asc(pairing.FieldID)).
		All(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "read undelivered pairings", "agent", s.name, "err", err.Error())
		return
	}
	sent := make([]string, 0, len(rows))
	for _, row := range rows {
		if send(pairedMessage(row)) != nil {
			break
		}
		sent = append(sent, row.ID)
	}
	b.markPaired(ctx, s.name, sent...)
}

// markPaired records that the pairings ids reached their agent. The
// caller holds the agent's pairings lock.
func (b *Board) markPaired(ctx context.Context, agentName string, ids ...string) {
	if len(ids) == 0 {
		return
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	err := b.db.Pairing.Update().
		Where(pairing.IDIn(ids...), pairing.DeliveredAtIsNil()).
		SetDeliveredAt(now).
		Exec(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "mark pairings delivered", "agent", agentName, "pairings", len(ids), "err", err.Error())
	}
}
