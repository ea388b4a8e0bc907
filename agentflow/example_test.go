package agentflow_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/symphonix/symphonix/agentflow"
)

func ExampleParse() {
	src := []byte(`workflow hello(input: Request) -> text {
  use agent "acme/greeter" as greeter
  pipeline {
    let reply = agent(greeter) { task "Greet {{input.name}}" expect text timeout 30s }
    return reply
  }
}`)
	f, diags := agentflow.Parse(src)
	fmt.Println(len(diags), "diagnostics")
	w := f.Workflows[0]
	let := w.Members[1].(*agentflow.Pipeline).Body[0].(*agentflow.Let)
	timeout := let.Value.(*agentflow.AgentExpr).Options[2].(*agentflow.TimeoutOption).Timeout
	fmt.Printf("%s: %s at %s is %d ms\n", w.Name.Name, timeout.Raw, timeout.Pos(), timeout.Millis)

	_, diags = agentflow.Parse([]byte("workflow w(input: T) -> T { pipeline { let x = { a: 1 let y = 2 } }"))
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// 0 diagnostics
	// hello: 30s at 4:82 is 30000 ms
	// 1:55: error: syntax: expected "}" or ",", found "let"
}

func ExampleFormat() {
	out, _ := agentflow.Format([]byte(`workflow w(input:T)->T{pipeline{let x={a:1,b:[1,2],}// x
return x}}`))
	fmt.Print(string(out))
	// Output:
	// workflow w(input: T) -> T {
	//   pipeline {
	//     let x = { a: 1, b: [1, 2] } // x
	//     return x
	//   }
	// }
}

func ExampleCheckFile() {
	src := []byte(`workflow triage(input: Ticket) -> Verdict {
  use agent "acme/triager" as triager
  type Verdict { urgent: bool, note?: text }
  pipeline {
    let v = agent(triager) { task "Triage {{input.title}}" expect Verdict }
    let n = v.note.count
    return { urgent: v.urgent, note: v.note ?? "none" }
  }
}`)
	f, diags := agentflow.Parse(src)
	diags = append(diags, agentflow.CheckFile(f)...)
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// 1:24: info: external-type: Ticket is not declared in the workflow: an external type, taken as any
	// 6:13: error: optional-member-access: text? is optional: give it a fallback with ?? before reading .count
}

func ExampleType_JSONSchema() {
	f, _ := agentflow.Parse([]byte(`workflow w(input: text) -> Plan {
  type Plan { steps: text[1..10], owner?: text }
  pipeline { return { steps: [input] } }
}`))
	w := f.Workflows[0]
	schema, err := agentflow.ResolveType(w, w.Output).JSONSchema()
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(schema)
	fmt.Println(string(b))
	// Output:
	// {"additionalProperties":false,"properties":{"owner":{"anyOf":[{"type":"string"},{"type":"null"}]},"steps":{"items":{"type":"string"},"maxItems":10,"minItems":1,"type":"array"}},"required":["steps"],"type":"object"}
}

// ExampleRun runs a workflow without agent() calls; one with them needs
// Config.Model.
func ExampleRun() {
	src := `workflow sizes(input: In) -> Out {
  type In { sizes: number[] }
  type Out { fits: bool, distinct: bool }
  pipeline {
    require input.sizes.any else fail "no sizes"
    let small = verify {
      check first = input.sizes.count in 1..3
      pass when first
    }
    return { fits: small.passed, distinct: unique(input.sizes) }
  }
}
`
	f, _ := agentflow.Parse([]byte(src))
	out, err := agentflow.Run(context.Background(), f, map[string]any{"sizes": []any{1.0, 2.0, 2.0}}, agentflow.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	// Output: {"distinct":false,"fits":true}
}
