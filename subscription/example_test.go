package subscription_test

import (
	"fmt"
	"log"
	"os"

	"github.com/symphonix/symphonix/subscription"
)

// An agent with a board: nothing until the board speaks, then what it said,
// and its last word from memory once the board is gone.
func Example() {
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sub, err := subscription.New(subscription.Config{
		Declared: map[string][]string{"orders": {"lookup_order", "refund"}},
		Board:    true,
		Memory:   subscription.MemoryPath(dir),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := sub.Recall(); err != nil {
		log.Print(err) // and carry on: nobody has decided
	}
	a := sub.MayCallTool("orders.lookup_order")
	fmt.Println(a.Allowed, a.Source)

	if _, err := sub.Set([]string{"orders.lookup_order"}); err != nil {
		log.Print(err)
	}
	a = sub.MayCallTool("orders.lookup_order")
	fmt.Println(a.Allowed, a.Source)

	sub.Unreachable()
	a = sub.MayCallTool("orders.refund")
	fmt.Println(a.Allowed, a.Source)
	fmt.Println(a.Refusal)
	// Output:
	// false nobody-decided
	// true board
	// false memory
	// The tool "orders.refund" cannot be called: it is switched off for this agent (the board's last word, remembered while the board cannot be reached). Do not call it again. Tools you may call: orders.lookup_order.
}
