// Package mcptools calls the MCP tools a flow declares in requires.mcp.
//
// A flow names its servers and, for each, the tools it may call:
//
//	"requires": { "mcp": { "orders": {
//	  "command": "./bin/mcp-orders", "args": [], "env": { "ORDERS_STATE": "orders.json" },
//	  "tools": [ { "name": "lookup_order", "description": "Look up an order by its id." } ] } } }
//
// A tool node then names "orders.lookup_order". [Open] turns the declaration
// into a [Set], whose [Set.Call] has exactly the shape the flow engine injects
// to call a tool:
//
//	func(ctx context.Context, name string, args map[string]any) (any, error)
//
// The declaration is the upper bound: a tool the flow did not declare is
// refused before any process is started, whatever the server offers. Which of
// the declared tools an agent is switched on for today is another question,
// answered by package subscription before the call reaches this package.
//
// Servers speak MCP over stdio (one child process per server, started on
// first use and restarted after it dies). Arguments and results are never
// logged: they are what a customer said and what a system knows about them.
package mcptools
