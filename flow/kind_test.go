package flow_test

import (
	"testing"

	"github.com/symphonix/symphonix/flow"
)

// TestIsSystemFlow: only a flow that says kind "system" is the system's; a
// flow that says nothing, or "user", is the person's.
func TestIsSystemFlow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind string
		want bool
	}{
		{"", false},
		{flow.UserKind, false},
		{flow.SystemKind, true},
	} {
		f := load(t, `{"version":"0.17","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[]}`)
		f.Kind = tt.kind
		if got := flow.IsSystemFlow(f); got != tt.want {
			t.Errorf("IsSystemFlow(kind %q) = %v, want %v", tt.kind, got, tt.want)
		}
		if p := flow.Validate(f); len(p) > 0 {
			t.Errorf("Validate(kind %q) = %v, want no problem", tt.kind, p)
		}
	}
	if flow.IsSystemFlow(nil) {
		t.Error("IsSystemFlow(nil) = true")
	}
	if len(flow.FlowKinds) != 2 {
		t.Errorf("FlowKinds = %v, want system and user", flow.FlowKinds)
	}
}
