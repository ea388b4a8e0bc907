package board

import (
	"context"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
)

// EnterPairingCodeAsForTest enters code as the signed-in person userID
// (email), as the UserService handler does for a session caller.
func (b *Board) EnterPairingCodeAsForTest(ctx context.Context, userID, email, code string) (*boardv1.EnterPairingCodeResponse, error) {
	return b.enterPairingCode(identity.NewContext(ctx, identity.Caller{Kind: identity.KindSession, Name: email, UserID: userID, Role: identity.RoleViewer}),
		&boardv1.EnterPairingCodeRequest{Code: code})
}

// EnterPairingCodeAsOperatorForTest enters code with an operator's caller.
func (b *Board) EnterPairingCodeAsOperatorForTest(ctx context.Context, name, code string) (*boardv1.EnterPairingCodeResponse, error) {
	return b.enterPairingCode(identity.NewContext(ctx, identity.Caller{Kind: identity.KindOperator, Name: name, Role: identity.RoleAdmin}),
		&boardv1.EnterPairingCodeRequest{Code: code})
}

// HashSecretForTest is the argon2id hash a verify secret is stored as.
func HashSecretForTest(secret string) string {
	h, err := identity.HashPassword(secret)
	if err != nil {
		panic(err)
	}
	return h
}

// PairAlphabetForTest is the symbols a pairing code is made of.
const PairAlphabetForTest = pairAlphabet
