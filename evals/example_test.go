package evals_test

import (
	"context"
	"fmt"

	"github.com/symphonix/symphonix/evals"
)

// A preview says what a run of the refund desk's suite would do, without
// a model, a key or a cost.
func ExamplePreview() {
	dir := "../examples/refund-desk"
	p, err := evals.Preview(context.Background(), dir, dir+"/refund-desk.eval.json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Total, "cases:", p.Calls.Runs, "runs of the flow,", p.Calls.Judge, "judge calls")
	fmt.Println(p.Evals[0].Name)
	// Output:
	// 3 cases: 3 runs of the flow, 3 judge calls
	// a broken kettle is refunded once the approver says yes
}
