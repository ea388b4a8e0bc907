package subscription

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWithin: a call made within an allowlist may call only what it names
// and the subscription switches on; one it leaves out is refused as the
// board's switches refuse, with its own reason and words; narrowing twice
// keeps what both allow; nothing named allows nothing.
func TestWithin(t *testing.T) {
	s := newSub(t, false, "")
	bg := context.Background()
	ctx := Within(bg, []string{"orders.lookup_order"})

	if a := s.MayCallToolIn(ctx, "orders.lookup_order"); !a.Allowed || a.Source != NoBoard {
		t.Errorf("allowed tool: %+v; want allowed, from no-board", a)
	}
	a := s.MayCallToolIn(ctx, "orders.refund")
	if a.Allowed || a.Reason != NotAllowed {
		t.Fatalf("tool left out: %+v; want refused, not-allowed", a)
	}
	for _, want := range []string{`"orders.refund"`, "allowing only orders.lookup_order", "Tools you may call: orders.lookup_order."} {
		if !strings.Contains(a.Refusal, want) {
			t.Errorf("refusal %q lacks %q", a.Refusal, want)
		}
	}
	if err := a.Err(); !errors.Is(err, ErrRefused) {
		t.Errorf("Err() = %v; want ErrRefused", err)
	}
	if a := s.MayCallTool("orders.refund"); !a.Allowed {
		t.Errorf("outside the allowlist the subscription still allows it: %+v", a)
	}
	if a := s.MayCallToolIn(bg, "orders.refund"); !a.Allowed {
		t.Errorf("a context without an allowlist: %+v; want MayCallTool's answer", a)
	}
	if a := s.MayCallToolIn(ctx, "orders.nope"); a.Reason != Undeclared {
		t.Errorf("undeclared within an allowlist: %+v; want undeclared", a)
	}

	none := Within(bg, nil)
	a = s.MayCallToolIn(none, "orders.lookup_order")
	if a.Allowed || a.Reason != NotAllowed || !strings.Contains(a.Refusal, "allowing no tool") || !strings.Contains(a.Refusal, "do not call any tool") {
		t.Errorf("tools none: %+v; want refused, allowing no tool", a)
	}

	twice := Within(Within(bg, []string{"orders.lookup_order", "orders.refund"}), []string{"orders.refund", "crm.find.customer"})
	if got, _ := AllowedWithin(twice); !cmp.Equal(got, []string{"orders.refund"}) {
		t.Errorf("narrowed twice: %q; want what both allow", got)
	}
	if _, ok := AllowedWithin(bg); ok {
		t.Error("AllowedWithin of a plain context says it has an allowlist")
	}
}

// TestWithinBoard: within an allowlist the board's switch still holds: a
// tool allowed and switched off is refused as switched off, naming as
// callable only what is both on and allowed.
func TestWithinBoard(t *testing.T) {
	s := newSub(t, true, "")
	set(t, s, "orders.refund", "crm.find.customer")
	ctx := Within(context.Background(), []string{"orders.lookup_order", "orders.refund"})
	a := s.MayCallToolIn(ctx, "orders.lookup_order")
	if a.Allowed || a.Reason != NotSwitchedOn || !strings.Contains(a.Refusal, "Tools you may call: orders.refund.") {
		t.Errorf("allowed but switched off: %+v; want not-switched-on, offering orders.refund only", a)
	}
	if a := s.MayCallToolIn(ctx, "orders.refund"); !a.Allowed || a.Source != FromBoard {
		t.Errorf("allowed and on: %+v", a)
	}
	if a := s.MayCallToolIn(ctx, "crm.find.customer"); a.Allowed || a.Reason != NotAllowed {
		t.Errorf("on but left out: %+v; want not-allowed", a)
	}
}
