package flow_test

import (
	"fmt"

	"github.com/symphonix/symphonix/flow"
)

func ExampleValidate() {
	f, err := flow.Load([]byte(`{
		"version": "0.1",
		"start": "classify",
		"state": { "question": {} },
		"nodes": [
			{ "id": "classify", "handler": "classifyRequest" },
			{ "id": "classify", "handler": "classifyAgain" },
			{ "id": "answer", "handlr": "answer" }
		],
		"edges": [
			{ "from": "classify", "type": "conditional", "router": "routeRequest",
			  "routes": { "general": "generalAnswer" } }
		]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range flow.Validate(f) {
		fmt.Println(p)
	}
	// Output:
	// nodes[2].handlr: UNKNOWN_KEY: Unknown key "handlr"
	// state: FEATURE_TOO_NEW: Declaring state requires version "0.2" or later
	// nodes[1].id: DUPLICATE_NODE_ID: Duplicate node id "classify"
	// nodes[2].handler: MISSING_HANDLER: Node "answer" has neither a handler nor a type
	// edges[0].routes.general: UNKNOWN_EDGE_TARGET: Route "general" goes to "generalAnswer", which is not a node or END
	// nodes[2]: UNREACHABLE_NODE: Node "answer" is not reachable: nothing routes to it
}

func ExampleLoad() {
	_, err := flow.Load([]byte(`{"version": "0.2", "version": "0.3"}`))
	fmt.Println(err)
	// Output:
	// flow: duplicate key "version" in the flow
}

func ExampleCheckpointerRequired() {
	f, _ := flow.Load([]byte(`{"version": "0.5", "start": "place", "edges": [],
		"nodes": [{ "id": "place", "handler": "placeOrder", "approval": { "ask": "Place this order?" } }]}`))
	fmt.Println(flow.CheckpointerRequired(f))
	// Output:
	// node "place": flow: approval needs a checkpointer: a paused run lives in one, and without it the first approval would end the run rather than hold it
}
