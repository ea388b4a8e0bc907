package flow

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type refusal struct {
	name string
	data string
	want []Problem
}

// refusals is every refusal Validate makes, with its exact code, message
// and path. Where the flow language reference spells a message out, the
// message here is the reference's, word for word.
var refusals = []refusal{
	// Shape.
	{"unknown top-level key", `{"version":"0.2","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[],"stat":{}}`,
		[]Problem{{CodeUnknownKey, `Unknown key "stat"`, "stat"}}},
	{"unknown node key", `{"version":"0.2","start":"a","nodes":[{"id":"a","handlr":"h"}],"edges":[]}`,
		[]Problem{
			{CodeUnknownKey, `Unknown key "handlr"`, "nodes[0].handlr"},
			{CodeMissingHandler, `Node "a" has neither a handler nor a type`, "nodes[0].handler"},
		}},
	{"unknown keys everywhere", `{"version":"0.17","start":"a","nodes":[{"id":"a","handler":"h",
		"retry":{"maxAttempts":2,"backoff":2},"approval":{"ask":"ok?","onRejected":"END"}}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"x":"END"},"limits":{"x":{"max":1,"then":"y","else":"z"}},"label":"l"}],
		"state":{"c":{"typ":"string"}},"requires":{"npm":{},"mcp":{"s":{"command":"c","cwd":"/"}}},"tools":[{"name":"t","desc":"d"}]}`,
		[]Problem{
			{CodeUnknownKey, `Unknown key "backoff"`, "nodes[0].retry.backoff"},
			{CodeUnknownKey, `Unknown key "onRejected"`, "nodes[0].approval.onRejected"},
			{CodeUnknownKey, `Unknown key "else"`, "edges[0].limits.x.else"},
			{CodeUnknownKey, `Unknown key "label"`, "edges[0].label"},
			{CodeUnknownKey, `Unknown key "typ"`, "state.c.typ"},
			{CodeUnknownKey, `Unknown key "npm"`, "requires.npm"},
			{CodeUnknownKey, `Unknown key "cwd"`, "requires.mcp.s.cwd"},
			{CodeUnknownKey, `Unknown key "desc"`, "tools[0].desc"},
			{CodeUnknownRoute, `then names "y", which is not a route of this edge`, "edges[0].limits.x.then"},
		}},
	{"odd keys are quoted in paths", `{"version":"0.9","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[],
		"requires":{"packages":{"@scope/pkg":1}}}`,
		[]Problem{{CodeWrongType, `requires.packages["@scope/pkg"] must be a string`, `requires.packages["@scope/pkg"]`}}},
	{"wrong types", `{"version":"0.3","start":7,"nodes":[{"id":"a","handler":"h","retry":{"maxAttempts":"3"}}, "b"],"edges":{}}`,
		[]Problem{
			{CodeWrongType, "start must be a string", "start"},
			{CodeWrongType, "nodes[0].retry.maxAttempts must be a whole number", "nodes[0].retry.maxAttempts"},
			{CodeWrongType, "nodes[1] must be an object", "nodes[1]"},
			{CodeWrongType, "edges must be a list of edges", "edges"},
		}},
	{"a whole number is whole", `{"version":"0.3","start":"a","nodes":[{"id":"a","handler":"h","retry":{"maxAttempts":2.5}}],"edges":[]}`,
		[]Problem{{CodeWrongType, "nodes[0].retry.maxAttempts must be a whole number", "nodes[0].retry.maxAttempts"}}},

	// The flow as a whole.
	{"unknown kind", `{"version":"0.17","kind":"admin","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{{CodeInvalidValue, `Unknown kind "admin": a flow's kind is one of system, user`, "kind"}}},
	{"kind below 0.17", `{"version":"0.16","kind":"system","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{{CodeFeatureTooNew, `Declaring a flow's kind requires version "0.17" or later`, "kind"}}},
	{"no start", `{"version":"0.1","nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{{CodeMissingStart, "Flow has no start", "start"}}},
	{"start names no node", `{"version":"0.1","start":"b","nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{
			{CodeUnknownStart, `start names "b", which is not a node`, "start"},
			{CodeUnreachableNode, `Node "a" is not reachable: nothing routes to it`, "nodes[0]"},
		}},
	{"start names END", `{"version":"0.1","start":"END","nodes":[],"edges":[]}`,
		[]Problem{{CodeUnknownStart, `start names "END", which is not a node`, "start"}}},
	{"no nodes, no edges", `{"version":"0.1","start":"a"}`,
		[]Problem{
			{CodeUnknownStart, `start names "a", which is not a node`, "start"},
			{CodeMissingNodes, "Flow has no nodes", "nodes"},
			{CodeMissingEdges, "Flow has no edges", "edges"},
		}},

	// Nodes.
	{"node without id", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"},{"handler":"h"}],"edges":[]}`,
		[]Problem{{CodeMissingNodeID, "Node has no id", "nodes[1].id"}}},
	{"duplicate node id", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"},{"id":"a","handler":"g"}],"edges":[]}`,
		[]Problem{{CodeDuplicateNodeID, `Duplicate node id "a"`, "nodes[1].id"}}},
	{"reserved node ids", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"},{"id":"END","handler":"h"},{"id":"START","handler":"h"}],
		"edges":[{"from":"a","to":"END"}]}`,
		[]Problem{
			{CodeReservedNodeID, `Node id "END" is reserved`, "nodes[1].id"},
			{CodeReservedNodeID, `Node id "START" is reserved`, "nodes[2].id"},
		}},
	{"node without handler or type", `{"version":"0.3","start":"a","nodes":[{"id":"a"}],"edges":[]}`,
		[]Problem{{CodeMissingHandler, `Node "a" has neither a handler nor a type`, "nodes[0].handler"}}},
	{"node with handler and type", `{"version":"0.3","start":"a","nodes":[{"id":"a","handler":"h","type":"llm","prompt":"p","output":"o"}],"edges":[]}`,
		[]Problem{{CodeHandlerAndType, `Node "a" has both a handler and a type: a node has one or the other`, "nodes[0].type"}}},
	{"unknown node type", `{"version":"0.17","start":"a","nodes":[{"id":"a","type":"form"}],"edges":[]}`,
		[]Problem{{CodeUnknownNodeType, `Node "a" has unknown type "form": a node's type is one of llm, tool, tools, fanout, ask, agent`, "nodes[0].type"}}},
	{"key of another kind", `{"version":"0.6","start":"a","nodes":[{"id":"a","handler":"h","prompt":"p"},
		{"id":"b","type":"llm","prompt":"p","output":"o","over":"x","tool":"t"}],"edges":[{"from":"a","to":"b"}]}`,
		[]Problem{
			{CodeMisplacedKey, `Key "prompt" does not belong on a handler node`, "nodes[0].prompt"},
			{CodeMisplacedKey, `Key "over" does not belong on an llm node`, "nodes[1].over"},
			{CodeMisplacedKey, `Key "tool" does not belong on an llm node`, "nodes[1].tool"},
		}},
	{"typed nodes without their fields", `{"version":"0.8","start":"a","nodes":[
		{"id":"a","type":"llm"},{"id":"b","type":"tool"},{"id":"c","type":"tools"},{"id":"d","type":"fanout"},{"id":"e","type":"ask"}],
		"edges":[{"from":"a","to":"b"},{"from":"b","to":"c"},{"from":"c","to":"d"},{"from":"c","to":"e"},{"from":"e","to":"END"}]}`,
		[]Problem{
			{CodeMissingField, `LLM node "a" has no prompt`, "nodes[0].prompt"},
			{CodeMissingField, `LLM node "a" has no output`, "nodes[0].output"},
			{CodeMissingField, `Tool node "b" has no tool`, "nodes[1].tool"},
			{CodeMissingField, `Tools node "c" has no calls`, "nodes[2].calls"},
			{CodeMissingField, `Tools node "c" has no output`, "nodes[2].output"},
			{CodeMissingField, `Fanout node "d" has no over`, "nodes[3].over"},
			{CodeMissingField, `Fanout node "d" has no to`, "nodes[3].to"},
			{CodeMissingField, `Fanout node "d" has no as`, "nodes[3].as"},
			{CodeMissingField, `Ask node "e" has no ask`, "nodes[4].ask"},
			{CodeMissingField, `Ask node "e" has no output`, "nodes[4].output"},
		}},
	{"retry without attempts", `{"version":"0.3","start":"a","nodes":[{"id":"a","handler":"h","retry":{"maxAttempts":0}},
		{"id":"b","handler":"h","retry":{}}],"edges":[{"from":"a","to":"b"}]}`,
		[]Problem{
			{CodeInvalidValue, "retry.maxAttempts must be a whole number, at least 1", "nodes[0].retry.maxAttempts"},
			{CodeInvalidValue, "retry.maxAttempts must be a whole number, at least 1", "nodes[1].retry.maxAttempts"},
		}},
	{"onError names no node", `{"version":"0.3","start":"a","nodes":[{"id":"a","handler":"h","onError":"escalate"}],"edges":[]}`,
		[]Problem{{CodeUnknownNodeRef, `onError names "escalate", which is not a node or END`, "nodes[0].onError"}}},
	{"approval without ask, onReject to no node", `{"version":"0.5","start":"a","nodes":[{"id":"a","handler":"h",
		"approval":{"show":["order"],"onReject":"cancel"}}],"edges":[]}`,
		[]Problem{
			{CodeMissingField, `Approval on node "a" has no ask`, "nodes[0].approval.ask"},
			{CodeUnknownNodeRef, `onReject names "cancel", which is not a node or END`, "nodes[0].approval.onReject"},
		}},
	{"approval shows and explains declared channels only", `{"version":"0.5","start":"a","state":{"order":{}},
		"nodes":[{"id":"a","handler":"h","approval":{"ask":"ok?","show":["order","secret",""],"why":"case"}}],"edges":[]}`,
		[]Problem{
			{CodeUndeclaredChannel, `Channel "secret" is not declared in state`, "nodes[0].approval.show[1]"},
			{CodeMissingField, "approval.show must name a channel", "nodes[0].approval.show[2]"},
			{CodeUndeclaredChannel, `Channel "case" is not declared in state`, "nodes[0].approval.why"},
		}},
	{"unreachable node", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"},{"id":"b","handler":"h"}],
		"edges":[{"from":"a","to":"END"},{"from":"b","to":"END"}]}`,
		[]Problem{{CodeUnreachableNode, `Node "b" is not reachable: nothing routes to it`, "nodes[1]"}}},

	// Fan-out.
	{"fanout channel without a reducer", `{"version":"0.6","start":"gather",
		"state":{"documents":{},"document":{},"summary":{}},
		"nodes":[{"id":"gather","handler":"gather"},
			{"id":"spread","type":"fanout","over":"documents","to":"grade","as":"document"},
			{"id":"grade","type":"llm","prompt":"Grade {{document}}","output":"summary"}],
		"edges":[{"from":"gather","to":"spread"},{"from":"grade","to":"END"}]}`,
		[]Problem{{CodeFanoutNeedsReducer,
			`grade writes "summary" once per item, so that channel needs a reducer - "append" collects the results`,
			"nodes[1].to"}}},
	{"fanout declares no edges", `{"version":"0.6","start":"s","nodes":[
		{"id":"s","type":"fanout","over":"xs","to":"g","as":"x"},{"id":"g","handler":"h"}],
		"edges":[{"from":"s","to":"g"},{"from":"g","to":"END"}]}`,
		[]Problem{{CodeFanoutHasEdges, `Fanout node "s" declares no edges of its own: the compiler writes them`, "edges[0].from"}}},
	{"fanout to no node", `{"version":"0.6","start":"s","nodes":[{"id":"s","type":"fanout","over":"xs","to":"END","as":"x"}],"edges":[]}`,
		[]Problem{{CodeUnknownNodeRef, `Fanout node "s" sends its items to "END", which is not a node`, "nodes[0].to"}}},

	// Edges.
	{"edge from and to unknown nodes", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","to":"b"},{"from":"c","to":"END"}]}`,
		[]Problem{
			{CodeUnknownEdgeTarget, `Edge to "b", which is not a node or END`, "edges[0].to"},
			{CodeUnknownEdgeSource, `Edge from "c", which is not a node`, "edges[1].from"},
		}},
	{"edge without from or to", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[{"to":"END"},{"from":"a"}]}`,
		[]Problem{
			{CodeMissingEdgeFrom, "Edge has no from", "edges[0].from"},
			{CodeMissingEdgeTo, `Edge from "a" has no to`, "edges[1].to"},
		}},
	{"START and END are not ends of a drawn edge", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"START","to":"a"},{"from":"END","to":"a"},{"from":"a","to":"START"}]}`,
		[]Problem{
			{CodeReservedEdgeEnd, "An edge never starts at START: the compiler draws that edge to start", "edges[0].from"},
			{CodeReservedEdgeEnd, "An edge never starts at END: nothing leaves it", "edges[1].from"},
			{CodeReservedEdgeEnd, "An edge never ends at START", "edges[2].to"},
		}},
	{"conditional edge without router or routes", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"conditional"},{"from":"a","type":"conditional","router":"r","routes":{}}]}`,
		[]Problem{
			{CodeMissingRouter, `Conditional edge from "a" has no router`, "edges[0].router"},
			{CodeMissingRoutes, `Conditional edge from "a" has no routes`, "edges[0].routes"},
			{CodeMissingRoutes, `Conditional edge from "a" has no routes`, "edges[1].routes"},
		}},
	{"conditional edge that also defines to", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"done":"END"},"to":"END"}]}`,
		[]Problem{{CodeConditionalEdgeWithTo, `Conditional edge from "a" also defines to`, "edges[0].to"}}},
	{"conditional edge missing type", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","router":"r","routes":{"done":"END"}}]}`,
		[]Problem{{CodeMissingEdgeType, `Edge from "a" has a router or routes but no type: a conditional edge says "type": "conditional"`, "edges[0].type"}}},
	{"unknown edge type", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[{"from":"a","type":"loop","to":"a"}]}`,
		[]Problem{{CodeUnknownEdgeType, `Unknown edge type "loop": an edge is "conditional", or normal with no type`, "edges[0].type"}}},
	{"normal edge with routes", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"normal","to":"END","router":"r"}]}`,
		[]Problem{{CodeMisplacedKey, `Key "router" does not belong on a normal edge`, "edges[0].router"}}},
	{"route to no node", `{"version":"0.1","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"done":"finish","back":"START","none":""}}]}`,
		[]Problem{
			{CodeReservedEdgeEnd, `Route "back" goes to START: no route ever does`, "edges[0].routes.back"},
			{CodeUnknownEdgeTarget, `Route "done" goes to "finish", which is not a node or END`, "edges[0].routes.done"},
			{CodeMissingEdgeTo, `Route "none" has no destination`, "edges[0].routes.none"},
		}},
	{"when describes no route", `{"version":"0.7","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"done":"END"},"when":{"done":"always","retry":"never"}}]}`,
		[]Problem{{CodeUnknownRoute, `when describes "retry", which is not a route of this edge`, "edges[0].when.retry"}}},

	// Limits.
	{"limits without state", `{"version":"0.2","start":"a","nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"retry":"a","done":"END"},"limits":{"retry":{"max":3,"then":"done"}}}]}`,
		[]Problem{{CodeLimitsNeedState, "Limits need the flow to declare state: the compiler counts in a channel of its own", "edges[0].limits"}}},
	{"limit shapes", `{"version":"0.3","start":"a","state":{},"nodes":[{"id":"a","handler":"h"},{"id":"b","handler":"h"}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"retry":"a","again":"b","done":"END"},"limits":{
			"retry":{"max":0,"then":"b"},
			"again":{"then":"again","per":"nowhere"},
			"done":{"max":1},
			"other":{"max":2,"then":"sideways"}}},
		{"from":"b","to":"END"}]}`,
		[]Problem{
			{CodeInvalidValue, "max must be a whole number, at least 1", "edges[0].limits.again.max"},
			{CodeInvalidValue, `then must name another route, not "again" itself`, "edges[0].limits.again.then"},
			{CodeUnknownNodeRef, `per names "nowhere", which is not a node`, "edges[0].limits.again.per"},
			{CodeMissingField, `Limit on route "done" has no then`, "edges[0].limits.done.then"},
			{CodeUnknownRoute, `limits names "other", which is not a route of this edge`, "edges[0].limits.other"},
			{CodeUnknownRoute, `then names "sideways", which is not a route of this edge`, "edges[0].limits.other.then"},
			{CodeInvalidValue, "max must be a whole number, at least 1", "edges[0].limits.retry.max"},
			{CodeUnknownRoute, `then names a route, not a node: "b" is not a route of this edge`, "edges[0].limits.retry.then"},
		}},
	{"limit max of the wrong type", `{"version":"0.2","start":"a","state":{},"nodes":[{"id":"a","handler":"h"}],
		"edges":[{"from":"a","type":"conditional","router":"r","routes":{"retry":"a","done":"END"},"limits":{"retry":{"max":"three","then":"done"}}}]}`,
		[]Problem{{CodeWrongType, "edges[0].limits.retry.max must be a whole number", "edges[0].limits.retry.max"}}},

	// Channels.
	{"undeclared channels", `{"version":"0.8","start":"a","inputs":["topic","mood"],"outputs":["answer"],
		"state":{"topic":{},"answer":{}},
		"nodes":[{"id":"a","type":"llm","prompt":"About {{ topic }} and {{ history }} and {{notes.first}}","output":"reply"},
			{"id":"b","type":"tool","tool":"t","args":{"q":"{{topic}}","deep":[{"x":"{{depth}}"}]},"output":"answer"},
			{"id":"c","type":"ask","ask":"More on {{topic}}?","output":"focus"},
			{"id":"d","type":"tools","calls":"queue","output":"answer"},
			{"id":"e","type":"fanout","over":"items","to":"c","as":"item"}],
		"edges":[{"from":"a","to":"b"},{"from":"b","to":"d"},{"from":"d","to":"e"},{"from":"c","to":"END"}]}`,
		[]Problem{
			{CodeUndeclaredChannel, `Channel "mood" is not declared in state`, "inputs[1]"},
			{CodeUndeclaredChannel, `Channel "history" is not declared in state`, "nodes[0].prompt"},
			{CodeUndeclaredChannel, `Channel "notes" is not declared in state`, "nodes[0].prompt"},
			{CodeUndeclaredChannel, `Channel "reply" is not declared in state`, "nodes[0].output"},
			{CodeUndeclaredChannel, `Channel "depth" is not declared in state`, "nodes[1].args.deep[0].x"},
			{CodeUndeclaredChannel, `Channel "focus" is not declared in state`, "nodes[2].output"},
			{CodeUndeclaredChannel, `Channel "queue" is not declared in state`, "nodes[3].calls"},
			{CodeUndeclaredChannel, `Channel "items" is not declared in state`, "nodes[4].over"},
			{CodeUndeclaredChannel, `Channel "item" is not declared in state`, "nodes[4].as"},
		}},
	{"a conversation reads history without declaring it", `{"version":"0.9","conversation":true,"start":"a","state":{"q":{},"a":{}},
		"nodes":[{"id":"a","type":"llm","prompt":"So far: {{history}}\n\nNow: {{q}}; last error {{__error}}","output":"a"}],"edges":[]}`,
		nil},
	{"channel types", `{"version":"0.9","start":"a","state":{"a":{"type":"array"},"b":{"type":"text"},"c":{"type":"string","accept":"image/*"}},
		"nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{
			{CodeUnknownChannelType, `Channel type "array" is not a DSL type: write "list"`, "state.a.type"},
			{CodeUnknownChannelType, `Unknown channel type "text": a channel's type is one of string, number, boolean, list, object, file`, "state.b.type"},
			{CodeMisplacedKey, `Channel "c" has accept, which belongs on a file channel`, "state.c.accept"},
		}},
	{"reserved channel names", `{"version":"0.2","start":"a","state":{"__error":{},"":{}},"nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{
			{CodeInvalidValue, "A channel needs a name", `state[""]`},
			{CodeReservedChannel, `Channel name "__error" is reserved: names beginning "__" are the engine's own`, "state.__error"},
		}},

	// Tools.
	{"tool node calls an undeclared tool", `{"version":"0.4","start":"a","tools":["getCustomerDetails"],
		"nodes":[{"id":"a","type":"tool","tool":"getCustomerOrder"}],"edges":[]}`,
		[]Problem{{CodeUndeclaredTool, `Tool node "a" calls "getCustomerOrder", which the flow's tools do not declare`, "nodes[0].tool"}}},
	{"tool node calls an undeclared MCP tool", `{"version":"0.9","start":"a",
		"requires":{"mcp":{"crm":{"command":"crm","tools":[{"name":"findCustomer"}]},"bare":{"command":"b"}}},
		"nodes":[{"id":"a","type":"tool","tool":"crm.deleteCustomer"},{"id":"b","type":"tool","tool":"bare.anything"},
			{"id":"c","type":"tool","tool":"crm.findCustomer"}],
		"edges":[{"from":"a","to":"b"},{"from":"b","to":"c"}]}`,
		[]Problem{
			{CodeUndeclaredMCPTool, `Tool node "a" calls "crm.deleteCustomer", which requires.mcp.crm does not declare`, "nodes[0].tool"},
			{CodeUndeclaredMCPTool, `Tool node "b" calls "bare.anything", which requires.mcp.bare does not declare`, "nodes[1].tool"},
		}},
	{"an MCP tool needs no entry in tools", `{"version":"0.9","start":"a","tools":["other"],
		"requires":{"mcp":{"crm":{"command":"crm","tools":[{"name":"findCustomer"}]}}},
		"nodes":[{"id":"a","type":"tool","tool":"crm.findCustomer"}],"edges":[]}`,
		nil},
	{"tool declarations", `{"version":"0.9","start":"a","tools":["t","t",{"description":"d"},3],
		"requires":{"env":[""],"mcp":{"a.b":{"command":"x"},"s":{"tools":[{"name":"u"},{"name":"u"}]}}},
		"nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
		[]Problem{
			{CodeWrongType, "tools[3] must be a tool's name or an object with its name", "tools[3]"},
			{CodeMissingField, "requires.env must name an environment variable", "requires.env[0]"},
			{CodeInvalidMCPServer, `MCP server name "a.b" must not contain ".": its tools are called "<server>.<tool>"`, `requires.mcp["a.b"]`},
			{CodeMissingField, `MCP server "s" has no command`, "requires.mcp.s.command"},
			{CodeDuplicateTool, `Tool "u" is declared twice`, "requires.mcp.s.tools[1]"},
			{CodeDuplicateTool, `Tool "t" is declared twice`, "tools[1]"},
			{CodeMissingField, "A tool needs a name", "tools[2].name"},
		}},

	// Structured output.
	{"schema and output channel disagree", `{"version":"0.15","start":"classify","state":{"question":{},"classification":{"type":"string"}},
		"nodes":[{"id":"classify","type":"llm","prompt":"Classify this request:\n\n{{question}}","output":"classification",
			"schema":{"type":"object","properties":{"category":{"type":"string"}}}}],"edges":[]}`,
		[]Problem{{CodeSchemaChannelMismatch,
			`LLM node "classify" schema type "object" is incompatible with output channel "classification" of type "string"`,
			"nodes[0].schema.type"}}},
	{"schema keyword LGFlow does not know", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"object","properties":{"amount":{"type":"number","exclusiveMinimum":0}},"additionalProperties":false}}],"edges":[]}`,
		[]Problem{
			{CodeSchemaUnknownKeyword, `Unknown schema keyword "exclusiveMinimum": a schema says only type, description, properties, required, items, enum, minimum, maximum, minLength, maxLength`,
				"nodes[0].schema.properties.amount.exclusiveMinimum"},
			{CodeSchemaUnknownKeyword, `Unknown schema keyword "additionalProperties": a schema says only type, description, properties, required, items, enum, minimum, maximum, minLength, maxLength`,
				"nodes[0].schema.additionalProperties"},
		}},
	{"schema says list, never array", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"array","items":{"type":"string"}}}],"edges":[]}`,
		[]Problem{{CodeSchemaUnknownType, `Schema type "array" is not a DSL type: write "list"`, "nodes[0].schema.type"}}},
	{"schema type LGFlow does not know", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"integer"}}],"edges":[]}`,
		[]Problem{{CodeSchemaUnknownType, `Unknown schema type "integer": a schema's type is one of string, number, boolean, list, object`, "nodes[0].schema.type"}}},
	{"a list must say what its items are", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"object","properties":{"tasks":{"type":"list"}}}}],"edges":[]}`,
		[]Problem{{CodeSchemaListWithoutItems, "A list must say what its items are", "nodes[0].schema.properties.tasks.items"}}},
	{"schema without a type", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"list","items":{"description":"a task"}}}],"edges":[]}`,
		[]Problem{{CodeSchemaMissingType, "A schema must say its type", "nodes[0].schema.items.type"}}},
	{"schema keywords of another type", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"string","items":{"type":"string"},"minimum":1,"properties":{},"required":[]}}],"edges":[]}`,
		[]Problem{
			{CodeSchemaMisplacedKeyword, `Schema keyword "items" does not apply to type "string"`, "nodes[0].schema.items"},
			{CodeSchemaMisplacedKeyword, `Schema keyword "minimum" does not apply to type "string"`, "nodes[0].schema.minimum"},
			{CodeSchemaMisplacedKeyword, `Schema keyword "properties" does not apply to type "string"`, "nodes[0].schema.properties"},
			{CodeSchemaMisplacedKeyword, `Schema keyword "required" does not apply to type "string"`, "nodes[0].schema.required"},
		}},
	{"schema values", `{"version":"0.15","start":"a","nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"object","required":["category","mood"],"properties":{
			"category":{"type":"string","enum":["a",3,true]},
			"size":{"type":"number","minimum":5,"maximum":1,"enum":[]},
			"name":{"type":"string","minLength":-1,"maxLength":-2}}}}],"edges":[]}`,
		[]Problem{
			{CodeSchemaUnknownRequired, `required names "mood", which is not one of the properties`, "nodes[0].schema.required[1]"},
			{CodeSchemaInvalid, "enum value 3 is not a string", "nodes[0].schema.properties.category.enum[1]"},
			{CodeSchemaInvalid, "enum value true is not a string", "nodes[0].schema.properties.category.enum[2]"},
			{CodeSchemaInvalid, "minLength must not be negative", "nodes[0].schema.properties.name.minLength"},
			{CodeSchemaInvalid, "maxLength must not be negative", "nodes[0].schema.properties.name.maxLength"},
			{CodeSchemaInvalid, "maxLength is less than minLength", "nodes[0].schema.properties.name.maxLength"},
			{CodeSchemaInvalid, "enum must list at least one value", "nodes[0].schema.properties.size.enum"},
			{CodeSchemaInvalid, "maximum is less than minimum", "nodes[0].schema.properties.size.maximum"},
		}},
	{"every schema keyword", `{"version":"0.15","start":"a","state":{"o":{"type":"object"}},"nodes":[{"id":"a","type":"llm","prompt":"p","output":"o",
		"schema":{"type":"object","description":"d","required":["s"],"properties":{
			"s":{"type":"string","enum":["x"],"minLength":1,"maxLength":2},
			"n":{"type":"number","minimum":0,"maximum":1,"enum":[0.5]},
			"b":{"type":"boolean","enum":[false]},
			"l":{"type":"list","items":{"type":"list","items":{"type":"object"}}}}}}],"edges":[]}`,
		nil},
}

func TestValidateRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Validate(load(t, []byte(tt.data)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryCodeRefused holds Codes to the table: every code is one some
// test above makes Validate return.
func TestEveryCodeRefused(t *testing.T) {
	t.Parallel()
	made := map[string]bool{CodeUnsupportedVersion: true, CodeFeatureTooNew: true, CodeMissingVersion: true}
	for _, r := range refusals {
		for _, p := range r.want {
			made[p.Code] = true
		}
	}
	seen := map[string]bool{}
	for _, c := range Codes {
		if seen[c] {
			t.Errorf("Codes lists %s twice", c)
		}
		seen[c] = true
		if !made[c] {
			t.Errorf("no refusal in the table has code %s", c)
		}
	}
	for c := range made {
		if !seen[c] {
			t.Errorf("code %s is not in Codes", c)
		}
	}
}

// TestDocs holds docs/flow.md to the package: every code and every feature
// is in it, as the platform's DSL reference is held to its compiler.
func TestDocs(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../docs/flow.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, c := range Codes {
		if !strings.Contains(doc, "`"+c+"`") {
			t.Errorf("docs/flow.md does not mention code %s", c)
		}
	}
	for _, f := range Features {
		row := "| `" + f.Key + "` | " + f.Since + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/flow.md has no row %q", row)
		}
	}
}

// TestValidateBuiltInGo checks a flow built in Go rather than loaded.
func TestValidateBuiltInGo(t *testing.T) {
	t.Parallel()
	f := &Flow{
		Version: "0.6",
		Start:   "a",
		State:   map[string]*Channel{"xs": {}, "x": {}, "out": {}},
		Nodes: []*Node{
			{ID: "a", Type: KindFanout, Over: "xs", To: "b", As: "x"},
			{ID: "b", Type: KindLLM, Prompt: "{{x}}", Output: "out", Handler: ""},
			{ID: "c", Handler: "h", Prompt: "stray"},
		},
		Edges: []*Edge{{From: "b", To: End}, {From: "c", Type: EdgeNormal, To: End, Router: "r"}},
	}
	want := []Problem{
		{CodeMisplacedKey, `Key "prompt" does not belong on a handler node`, "nodes[2].prompt"},
		{CodeFanoutNeedsReducer, `b writes "out" once per item, so that channel needs a reducer - "append" collects the results`, "nodes[0].to"},
		{CodeMisplacedKey, `Key "router" does not belong on a normal edge`, "edges[1].router"},
		{CodeUnreachableNode, `Node "c" is not reachable: nothing routes to it`, "nodes[2]"},
	}
	got := Validate(f)
	less := func(a, b Problem) int { return strings.Compare(a.Path+a.Code, b.Path+b.Code) }
	slices.SortFunc(want, less)
	slices.SortFunc(got, less)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	if ps := Validate(&Flow{}); len(ps) != 4 {
		t.Errorf("Validate(empty flow) = %v, want version, start, nodes and edges missing", ps)
	}
	if ps := Validate(nil); len(ps) != 4 {
		t.Errorf("Validate(nil) = %v, want version, start, nodes and edges missing", ps)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	f := load(t, []byte(`{"version":"0.1","start":"b","nodes":[{"id":"a","handler":"h"}],"edges":[]}`))
	err := Check(f)
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("Check = %v, want a *ValidationError", err)
	}
	if len(ve.Problems) != 2 {
		t.Errorf("Check problems = %v, want 2", ve.Problems)
	}
	want := `flow: start: UNKNOWN_START: start names "b", which is not a node (and 1 more)`
	if ve.Error() != want {
		t.Errorf("Error() = %q, want %q", ve.Error(), want)
	}
	if got := strings.Count(ve.Format(), "\n"); got != 2 {
		t.Errorf("Format() has %d lines, want 2:\n%s", got, ve.Format())
	}
}
