package agentlink_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/symphonix/symphonix/agentlink"
)

// Link a flow folder to a board until interrupted.
func ExampleLink_Run() {
	id, err := agentlink.ReadIdentity("examples/hello")
	if err != nil {
		log.Fatal(err)
	}
	link, err := agentlink.New(agentlink.Config{
		BoardURL: os.Getenv("MONITOR_URL"),
		Token:    os.Getenv("MONITOR_TOKEN"),
		Identity: id,
		OnState: func(s agentlink.State) {
			fmt.Println("link up:", s.Up, s.Session)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := link.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

func ExampleBackoff() {
	for attempt := range 4 {
		// With r = 0.5 the wait is three quarters of the exponential step.
		fmt.Println(agentlink.Backoff(attempt, agentlink.DefaultMinBackoff, agentlink.DefaultMaxBackoff, 0.5))
	}
	// Output:
	// 187.5ms
	// 375ms
	// 750ms
	// 1.5s
}
