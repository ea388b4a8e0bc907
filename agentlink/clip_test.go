package agentlink_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/symphonix/symphonix/agentlink"
)

// TestClip: what is told to the board, or kept beside the link, is valid
// UTF-8 within its limit, cut at a character's edge.
func TestClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"short", "the customer called", 100, "the customer called"},
		{"cut", "abcdef", 3, "abc"},
		{"at a character's edge", "ab€", 4, "ab"},
		{"invalid bytes replaced", "a\xffb", 10, "a\uFFFDb"},
		{"the limit", strings.Repeat("é", 4096), 4096, strings.Repeat("é", 2048)},
	}
	for _, tt := range tests {
		got := agentlink.Clip(tt.in, tt.max)
		if got != tt.want || len(got) > tt.max || !utf8.ValidString(got) {
			t.Errorf("Clip(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
