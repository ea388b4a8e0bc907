package triggers_test

import (
	"fmt"
	"time"

	"github.com/symphonix/symphonix/triggers"
)

// A schedule's next run, in words and as an instant: 02:30 in New York on
// the night the clocks skip from 02:00 to 03:00 runs once, as they jump.
func ExampleNextRun() {
	after := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	fmt.Println(triggers.Describe("30 2 * * *"))
	for range 2 {
		next, ok := triggers.NextRun("30 2 * * *", "America/New_York", after)
		fmt.Println(next.UTC().Format(time.RFC3339), ok)
		after = next
	}
	_, ok := triggers.NextRun("0 0 30 2 *", "UTC", after)
	fmt.Println("30 February:", ok)
	// Output:
	// Every day at 02:30
	// 2026-03-08T07:00:00Z true
	// 2026-03-09T06:30:00Z true
	// 30 February: false
}

// An input mapping filled from a webhook's body and query, by the flow's
// template rules: a lone placeholder passes the value, a number stays one.
func ExampleMapInput() {
	t := triggers.Trigger{ID: "deploy", Kind: triggers.KindWebhook, Path: "/hooks/deploy", Input: map[string]any{
		"topic": "Deploy {{body.repo}} at {{query.ref}}",
		"count": "{{body.count}}",
	}}
	occ := triggers.Occurrence{Method: "POST", Path: "/hooks/deploy", Query: map[string]string{"ref": "main"},
		Body: map[string]any{"repo": "site", "count": 3.0}}
	in, err := triggers.MapInput(t, occ, time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC))
	fmt.Println(in["topic"], in["count"], err)
	// Output: Deploy site at main 3 <nil>
}

// A result laid out for a chat app.
func ExampleAsTable() {
	fmt.Println(triggers.AsTable([]any{
		map[string]any{"service": "api", "p95": 120.0},
		map[string]any{"service": "search", "p95": 85.0},
	}))
	// Output:
	// ```
	// p95  service
	// ---  -------
	// 120  api
	//  85  search
	// ```
}
