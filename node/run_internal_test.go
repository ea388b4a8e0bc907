package node

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestAwaitSwitches: a run waits for the board's first word on the tools
// until it comes, and no longer than the bound; its context ends the wait.
func TestAwaitSwitches(t *testing.T) {
	t.Parallel()
	t.Run("the word comes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			spoke := make(chan struct{})
			time.AfterFunc(DefaultSwitchesWithin-time.Millisecond, func() { close(spoke) })
			start := time.Now()
			heard, err := awaitSwitches(t.Context(), spoke, DefaultSwitchesWithin)
			if !heard || err != nil || time.Since(start) != DefaultSwitchesWithin-time.Millisecond {
				t.Errorf("awaitSwitches = %v, %v after %s; want heard as the word came", heard, err, time.Since(start))
			}
		})
	})
	t.Run("no word", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			heard, err := awaitSwitches(t.Context(), make(chan struct{}), DefaultSwitchesWithin)
			if heard || err != nil || time.Since(start) != DefaultSwitchesWithin {
				t.Errorf("awaitSwitches = %v, %v after %s; want not heard after exactly %s", heard, err, time.Since(start), DefaultSwitchesWithin)
			}
		})
	})
	t.Run("stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(time.Second, cancel)
			start := time.Now()
			heard, err := awaitSwitches(ctx, make(chan struct{}), DefaultSwitchesWithin)
			if heard || !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
				t.Errorf("awaitSwitches = %v, %v after %s; want context.Canceled when the context ended", heard, err, time.Since(start))
			}
		})
	})
}
