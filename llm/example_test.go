package llm_test

import (
	"context"
	"fmt"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
)

func ExampleStandIn() {
	lo, hi := 0.0, 1.0
	schema := &flow.Schema{
		Type: "object",
		Properties: map[string]*flow.Schema{
			"category":   {Type: "string", Enum: []any{"technical", "billing", "general"}},
			"confidence": {Type: "number", Minimum: &lo, Maximum: &hi},
		},
		Required: []string{"category", "confidence"},
	}
	ctx := context.Background()
	reply, _ := llm.StandIn{}.Complete(ctx, flow.ModelRequest{Node: "classify", Prompt: "Classify: I was charged twice", Schema: schema})
	fmt.Println(reply.Text)
	reply, _ = llm.StandIn{}.Complete(ctx, flow.ModelRequest{Node: "answer", Prompt: "Write a short reply to the customer."})
	fmt.Println(reply.Text)
	// Output:
	// {"category":"technical","confidence":0.5}
	// stand-in reply to: Write a short reply to the customer.
}

func ExampleFromEnv() {
	env := map[string]string{} // os.Getenv in an agent
	_, desc := llm.FromEnv(func(k string) string { return env[k] })
	fmt.Println(desc)
	env["OPENAI_API_KEY"] = "sk-…"
	env["OPENAI_MODEL"] = "gpt-4.1-mini"
	_, desc = llm.FromEnv(func(k string) string { return env[k] })
	fmt.Println(desc)
	// Output:
	// model: stand-in (no OPENAI_API_KEY)
	// model: gpt-4.1-mini at https://api.openai.com/v1
}
