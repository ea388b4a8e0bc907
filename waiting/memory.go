package waiting

import (
	"github.com/symphonix/symphonix/flow"
)

// memory is the checkpointer OpenOrMemory falls back to: flow's
// MemoryCheckpointer, whose runs last as long as the process, with a Close
// so that whatever OpenOrMemory returns can be closed alike.
type memory struct {
	flow.MemoryCheckpointer
	why error // why the folder's store could not be opened
}

var _ flow.Checkpointer = (*memory)(nil)

func newMemory(why error) *memory { return &memory{why: why} }

// Close does nothing: there is nothing to let go of.
func (m *memory) Close() error { return nil }
