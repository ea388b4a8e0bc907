package board

import (
	"testing"
	"time"
)

// TestRedialWindow: the window a fleet spreads its first redial over is the
// time the board needs to admit it, within bounds.
func TestRedialWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		agents int64
		want   time.Duration
	}{
		{0, minRedialWithin},
		{1, minRedialWithin},
		{admitPerSecond / 4, minRedialWithin},
		{admitPerSecond, time.Second},
		{5 * admitPerSecond, 5 * time.Second},
		{20 * admitPerSecond / 2, 10 * time.Second},
		{1 << 40, maxRedialWithin},
	}
	for _, tt := range tests {
		if got := RedialWindow(tt.agents); got != tt.want {
			t.Errorf("RedialWindow(%d) = %v, want %v", tt.agents, got, tt.want)
		}
	}
}
