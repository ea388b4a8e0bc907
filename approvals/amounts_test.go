package approvals_test

import (
	"strings"
	"testing"

	"github.com/symphonix/symphonix/approvals"
)

// TestAmountsOf: the question's amounts come first, then the account's,
// and no more than MaxAmounts; text without an amount gives none.
func TestAmountsOf(t *testing.T) {
	got := approvals.AmountsOf("Refund €6,000 for order A-1043?", "Paid 6.000,50 EUR twice.")
	if len(got) != 2 || got[0].Value != 6000 || got[0].Currency != "EUR" || got[1].Value != 6000.5 {
		t.Errorf("AmountsOf = %+v, want €6,000 then 6.000,50 EUR", got)
	}
	many := strings.Repeat("$5 and ", 40)
	if got := approvals.AmountsOf(many, "$7"); len(got) != approvals.MaxAmounts {
		t.Errorf("AmountsOf(40 amounts) = %d, want %d", len(got), approvals.MaxAmounts)
	}
	if got := approvals.AmountsOf("Ship order A-12 on 2026-12-01?", ""); got != nil {
		t.Errorf("AmountsOf(no amount) = %+v, want nil", got)
	}
}
