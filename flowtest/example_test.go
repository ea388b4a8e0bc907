package flowtest_test

import (
	"context"
	"fmt"

	"github.com/symphonix/symphonix/flowtest"
)

// ExampleRun runs the refund desk's test file, as agent test does.
func ExampleRun() {
	rs, err := flowtest.Run(context.Background(), "../examples/refund-desk", flowtest.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rs {
		for _, c := range r.Cases {
			fmt.Println(c.Passed, c.Name, c.Path)
		}
	}
	s := flowtest.Summarize(rs)
	fmt.Printf("%d passed, %d failed\n", s.Passed, s.Failed)
	// Output:
	// true a refund approved is paid and answered [lookup decide pay answer]
	// true a refund refused by the approver is never paid [lookup decide answer]
	// true a refund the orders server refuses fails the run [lookup decide pay]
	// true a denied request is answered without asking anyone [lookup decide answer]
	// 4 passed, 0 failed
}
