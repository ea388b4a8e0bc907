package agent

import (
	"context"

	"github.com/symphonix/symphonix/files"
	"github.com/symphonix/symphonix/flow"
)

// HasFiles reports whether f declares a file channel: the flows an agent
// keeps a file store for.
func HasFiles(f *flow.Flow) bool {
	for _, c := range f.State {
		if c != nil && c.Type == flow.ChannelFile {
			return true
		}
	}
	return false
}

// openFiles opens the folder's file store (files.Dir) for a flow with a
// file channel, and gives it to the graph so that an llm node can hand a
// model the files its prompt reads. A flow without one has no store.
func (a *Agent) openFiles(cfg files.Config, bo *flow.BuildOptions) error {
	if !HasFiles(a.Flow) {
		return nil
	}
	s, err := files.Open(files.Dir(a.Dir), cfg)
	if err != nil {
		return err
	}
	a.Files, bo.Files = s, storeReader{s}
	return nil
}

// storeReader reads a file's bytes from the store for the engine.
type storeReader struct{ s *files.Store }

func (r storeReader) ReadFile(ctx context.Context, f flow.File) ([]byte, error) {
	return r.s.Read(ctx, f.ID)
}
