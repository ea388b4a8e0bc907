package agentflow_test

import (
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
