package pump_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"

	"github.com/symphonix/symphonix/internal/pump"
)

func TestReceiveDeliversThenCloses(t *testing.T) {
	t.Parallel()
	msgs := []string{"a", "b"}
	recv := func() (string, error) {
		if len(msgs) == 0 {
			return "", io.EOF
		}
		m := msgs[0]
		msgs = msgs[1:]
		return m, nil
	}
	var got []string
	var last error
	for r := range pump.Receive(t.Context(), recv) {
		if r.Err != nil {
			last = r.Err
			continue
		}
		got = append(got, r.Msg)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" || !errors.Is(last, io.EOF) {
		t.Errorf("Receive delivered %v then %v, want [a b] then EOF", got, last)
	}
}

// TestReceiveEndsWithContext: a reader that stops reading ends ctx, and
// the goroutine ends (the channel closes) even though nobody reads.
func TestReceiveEndsWithContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		in := pump.Receive(ctx, func() (int, error) { return 1, nil })
		<-in // the goroutine is now blocked delivering the next one
		synctest.Wait()
		cancel()
		for range in {
		}
	})
}
