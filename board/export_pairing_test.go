package board

import (
	"context"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// EnterPairingCodeAsForTest enters code as the signed-in person userID
// (email), as the UserService handler does for a session caller.
func (b *Board) EnterPairingCodeAsForTest(ctx context.Context, userID, email, code string) (*boardv1.EnterPairingCodeResponse, error) {
	return b.enterPairingCode(withCaller(ctx, Caller{Kind: KindSession, Name: email, UserID: userID, Role: RoleViewer}),
		&boardv1.EnterPairingCodeRequest{Code: code})
}

// EnterPairingCodeAsOperatorForTest enters code with an operator's caller.
func (b *Board) EnterPairingCodeAsOperatorForTest(ctx context.Context, name, code string) (*boardv1.EnterPairingCodeResponse, error) {
	return b.enterPairingCode(withCaller(ctx, Caller{Kind: KindOperator, Name: name, Role: RoleAdmin}),
		&boardv1.EnterPairingCodeRequest{Code: code})
}

// HashSecretForTest is the argon2id hash a verify secret is stored as.
func HashSecretForTest(secret string) string {
	h, err := hashPassword(secret)
	if err != nil {
		panic(err)
	}
	return h
}

// PairAlphabetForTest is the symbols a pairing code is made of.
const PairAlphabetForTest = pairAlphabet
