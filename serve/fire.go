package serve

import (
	"context"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
)

// CheckThread checks a thread name as the API does: 1 to MaxThreadChars
// characters of A-Z a-z 0-9 . _ -. The error names the field, "thread".
func CheckThread(thread string) error { return validThread(thread) }

// Start runs input on thread as a message to the chat does — the journal,
// the conversation's history and transcript, and its pointer treat it
// alike — for a run that starts
// elsewhere than this server's API (one fired from the board). ctx says
// who started it (runs.StartedBy) and may name the run (flow.WithRunID);
// the caller checks the thread (CheckThread), the input and the pause.
func (s *Server) Start(ctx context.Context, thread string, input map[string]any) (flow.Result, governed.Verdict, error) {
	input = s.withHistory(ctx, thread, input)
	res, v, err := s.gov.Invoke(journal.WithThread(ctx, thread), thread, input)
	if err != nil {
		return res, v, err
	}
	s.said(ctx, thread, res)
	s.convs.touch(ctx, thread, s.now())
	s.changed(thread)
	return res, v, nil
}
