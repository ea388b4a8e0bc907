package flow

import "testing"

func TestApprovedAnswer(t *testing.T) {
	t.Parallel()
	yes := []any{true, "yes", "Y", " approve ", "APPROVED", "ok", "true", map[string]any{"approved": true}}
	no := []any{"no", "nope", "yes please", "1", float64(1), map[string]any{"approved": "yes"}, map[string]any{"approved": false}, []any{"yes"}, false}
	for _, a := range yes {
		if !approvedAnswer(a) {
			t.Errorf("approvedAnswer(%#v) = false, want true", a)
		}
	}
	for _, a := range no {
		if approvedAnswer(a) {
			t.Errorf("approvedAnswer(%#v) = true, want false", a)
		}
	}
}

func TestEmptyAnswer(t *testing.T) {
	t.Parallel()
	for _, a := range []any{nil, false, 0, float64(0), "", "  "} {
		if !emptyAnswer(a) {
			t.Errorf("emptyAnswer(%#v) = false, want true", a)
		}
	}
	for _, a := range []any{"no", true, float64(1), map[string]any{"approved": false}} {
		if emptyAnswer(a) {
			t.Errorf("emptyAnswer(%#v) = true, want false", a)
		}
	}
}
