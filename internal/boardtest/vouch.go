package boardtest

import (
	"context"
	"time"

	"github.com/symphonix/symphonix/ent/verification"
)

// Verified records in the store that the board verified the person at
// email (canonical) for the agent, as the board does when it answers an
// agent's verify with a yes, so that the agent's conversation pointers may
// name them. It skips the secret, which is hashed to be slow to check.
func (b *Board) Verified(agent, email string) {
	b.t.Helper()
	err := b.Store.Verification.Create().
		SetAgent(agent).SetEmail(email).SetUserID("u-"+email).SetAt(time.Now()).
		OnConflictColumns(verification.FieldAgent, verification.FieldEmail).UpdateAt().
		Exec(context.Background())
	if err != nil {
		b.t.Fatalf("record %s verified for %s: %v", email, agent, err)
	}
}
