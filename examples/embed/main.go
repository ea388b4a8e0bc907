// Command embed shows a Go program embedding the flow engine with its own
// handlers and router: the flow file says what runs in which order, and
// the program supplies the code behind each name.
//
//	go run ./examples/embed "Why was I charged twice?"
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

//go:embed flow.json
var flowJSON []byte

func main() {
	message := strings.Join(os.Args[1:], " ")
	if err := run(context.Background(), message, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, message string, stdout io.Writer) error {
	f, err := flow.Load(flowJSON)
	if err != nil {
		return err
	}
	g, err := flow.Build(f, flow.BuildOptions{Registry: registry})
	if err != nil {
		return err
	}
	res, err := g.Invoke(ctx, "", map[string]any{"message": message})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", res.State["topic"], res.State["answer"])
	return nil
}

// registry is the code behind the flow's names.
var registry = flow.Registry{
	Handlers: map[string]flow.Handler{
		"classify": func(_ context.Context, s flow.State) (flow.Update, error) {
			text := strings.ToLower(fmt.Sprint(s["message"]))
			for _, w := range []string{"charge", "invoice", "refund", "bill", "paid", "price"} {
				if strings.Contains(text, w) {
					return flow.Update{"topic": "billing"}, nil
				}
			}
			return flow.Update{"topic": "other"}, nil
		},
		"billing": func(context.Context, flow.State) (flow.Update, error) {
			return flow.Update{"answer": "Your invoices are at /account/invoices; we will look at this charge today."}, nil
		},
		"other": func(context.Context, flow.State) (flow.Update, error) {
			return flow.Update{"answer": "Thank you for writing; a person will answer within a day."}, nil
		},
	},
	Routers: map[string]flow.Router{
		"byTopic": func(_ context.Context, s flow.State) (string, error) {
			return fmt.Sprint(s["topic"]), nil
		},
	},
}
