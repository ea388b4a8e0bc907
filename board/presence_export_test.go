package board

import (
	"context"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
)

// ArriveForTest records the agent name online as a hello would, in a
// session of its own with no link, calling before just before the store
// write. It returns the session id.
func (b *Board) ArriveForTest(ctx context.Context, name string, before func()) (string, error) {
	s := &session{id: newSessionID(), name: name, cancel: func(error) {}}
	_, err := b.presence.arrive(ctx, s, func(ctx context.Context) (*ent.Agent, error) {
		before()
		row, _, err := b.recordHello(ctx, &boardv1.Hello{Name: name, Protocol: Protocol}, s.id)
		return row, err
	})
	return s.id, err
}

// ClosingForTest reports whether Close has begun ending the links.
func (b *Board) ClosingForTest() bool {
	b.presence.mu.Lock()
	defer b.presence.mu.Unlock()
	return b.presence.closed
}

// OfflineWritesForTest is how many writes have recorded agents offline.
func (b *Board) OfflineWritesForTest() int64 { return b.presence.off.writes.Load() }
