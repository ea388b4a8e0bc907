package agents_test

import (
	"fmt"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
)

// A registry built in memory, and the list a model is offered to choose
// from.
func ExampleNew() {
	f, err := flow.Load([]byte(`{
	  "version": "0.17", "description": "Answers questions from the sales database.",
	  "inputs": ["question"], "outputs": ["answer"],
	  "state": { "question": { "type": "string", "description": "What to ask." }, "answer": { "type": "string" } },
	  "start": "ask", "nodes": [ { "id": "ask", "type": "llm", "prompt": "{{question}}", "output": "answer" } ],
	  "edges": [ { "from": "ask", "to": "END" } ]
	}`))
	if err != nil {
		panic(err)
	}
	reg, err := agents.New(agents.Spec{Agents: []agents.Entry{{Name: "sql", Flow: "sql"}}},
		agents.Options{Flows: map[string]*flow.Flow{"sql": f}})
	if err != nil {
		panic(err)
	}
	fmt.Print(agents.Describe(reg.Contracts([]string{"sql"})))
	// Output:
	// - sql: Answers questions from the sales database.
	//   takes:
	//     - question (string): What to ask.
	//   gives back:
	//     - answer (string)
}
