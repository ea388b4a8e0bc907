package board

import (
	"context"
	"sync"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/setting"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// The doors a board may want agents to identify people by
// (docs/pairing.md).
const (
	// DoorPairing: the agent shows a code in the conversation and the
	// person enters it on the board while signed in.
	DoorPairing = "pairing"
	// DoorVerify: the agent asks the person who they are and checks the
	// address and secret with the board.
	DoorVerify = "verify"
	// DoorNone: the board does not identify people.
	DoorNone = "none"
	// DefaultDoor is the door of a board whose admin has not chosen one:
	// pairing, the one that asks nothing of a person but to be signed in
	// and proves nothing beyond "the person who entered the code".
	DefaultDoor = DoorPairing
)

// settingIdentify is the key of the door in the settings table.
const settingIdentify = "identify"

func validDoor(d string) bool {
	return d == DoorPairing || d == DoorVerify || d == DoorNone
}

// Limits on identifying people (docs/pairing.md).
const (
	// wrongPerPerson wrong pairing codes per person in wrongPersonWithin.
	wrongPerPerson    = 10
	wrongPersonWithin = 15 * time.Minute
	// wrongOnBoard wrong pairing codes from everyone together per minute.
	wrongOnBoard       = 100
	wrongOnBoardWithin = time.Minute
	// failsPerWho failed verifies of one address in failsWhoWithin.
	failsPerWho    = 5
	failsWhoWithin = 15 * time.Minute
	// verifiesPerAgent verifies one agent may ask in verifyAgentWithin.
	verifiesPerAgent  = 60
	verifyAgentWithin = time.Minute
)

// identifyState is what pairing and verify keep in memory: the rate
// limits and the per-agent lock that makes each pairing reach its agent
// once. The zero value is ready: limits makes the limiters, on the
// board's clock, on first use. Like sign-in's, the counts are every
// board's when several share the store (sharedlimit.go).
type identifyState struct {
	once sync.Once
	// wrongByPerson, wrongOverall: wrong pairing codes (pairing.go).
	wrongByPerson *limiter
	wrongOverall  *limiter
	// failsByWho: failed verifies per address; byAgent: verifies per
	// agent (verify.go).
	failsByWho *limiter
	byAgent    *limiter
	// pairings serialises, per agent, sending pairings and marking them
	// delivered; entering, per person, entering codes (pairing.go).
	pairings keyedLocks
	entering keyedLocks
}

// limits is b's identifyState with its limiters made.
func (b *Board) limits() *identifyState {
	s := &b.identify
	s.once.Do(func() {
		s.wrongByPerson = b.limiter("pair.wrong_person", wrongPerPerson, wrongPersonWithin)
		s.wrongOverall = b.limiter("pair.wrong", wrongOnBoard, wrongOnBoardWithin)
		s.failsByWho = b.limiter("verify.fails", failsPerWho, failsWhoWithin)
		s.byAgent = b.limiter("verify.agent", verifiesPerAgent, verifyAgentWithin)
	})
	return s
}

// door is the door the board wants now.
func (b *Board) door(ctx context.Context) (string, error) {
	row, err := b.db.Setting.Get(ctx, settingIdentify)
	if ent.IsNotFound(err) {
		return DefaultDoor, nil
	}
	if err != nil {
		return "", err
	}
	if !validDoor(row.Value) {
		// Written by hand into the store: the safe reading is the default.
		return DefaultDoor, nil
	}
	return row.Value, nil
}

// getIdentify is UserService.GetIdentify: any operator may ask.
func (b *Board) getIdentify(ctx context.Context) (*boardv1.GetIdentifyResponse, error) {
	d, err := b.door(ctx)
	if err != nil {
		return nil, err
	}
	return &boardv1.GetIdentifyResponse{Door: doorProto(d)}, nil
}

// setIdentify is UserService.SetIdentify: admins only, audited as
// "identify.set" in the same transaction as the change.
func (b *Board) setIdentify(ctx context.Context, req *boardv1.SetIdentifyRequest) (*boardv1.SetIdentifyResponse, error) {
	caller, ok := identity.FromContext(ctx)
	if !ok || !caller.Operates() || caller.Role < identity.RoleAdmin {
		return nil, refusal(connect.CodePermissionDenied, "permission denied: needs role %s", identity.RoleAdmin)
	}
	d, err := doorFrom("door", req.GetDoor())
	if err != nil {
		return nil, err
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	err = store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		was := DefaultDoor
		row, err := tx.Setting.Get(ctx, settingIdentify)
		switch {
		case ent.IsNotFound(err):
		case err != nil:
			return err
		default:
			was = row.Value
		}
		err = tx.Setting.Create().
			SetID(settingIdentify).
			SetValue(d).
			SetUpdatedAt(now).
			SetUpdatedBy(caller.Name).
			OnConflictColumns(setting.FieldID).
			UpdateNewValues().
			Exec(ctx)
		if err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: caller.Name, Action: "identify.set", Subject: settingIdentify,
			Detail: map[string]any{"door": d, "was": was}, At: now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.SetIdentifyResponse{Door: doorProto(d)}, nil
}

// howToIdentify answers a how_to_identify. Only a failure to send ends
// the link.
func (l linkService) howToIdentify(ctx context.Context, s *session, q *boardv1.HowToIdentify) error {
	if err := validRequestID(q.GetRequestId()); err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "how_to_identify", badRequest("how_to_identify.request_id: %v", err))
	}
	d, err := l.b.door(ctx)
	if err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "how_to_identify", err)
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_HowToIdentifyAnswer{
		HowToIdentifyAnswer: &boardv1.HowToIdentifyAnswer{RequestId: q.GetRequestId(), Door: doorProto(d)},
	}})
}
