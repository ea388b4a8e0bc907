package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"

	"github.com/symphonix/symphonix/mcptools"
)

// A flow's requires.mcp becomes a Set, and the Set's Call is the function the
// flow engine calls tools with.
func Example() {
	ctx := context.Background()
	requires := []byte(`{"orders": {
	  "command": "./bin/mcp-orders",
	  "env": {"ORDERS_STATE": "orders.json"},
	  "tools": [{"name": "lookup_order", "description": "Look up an order by its id."}]}}`)
	var servers map[string]mcptools.Server
	if err := json.Unmarshal(requires, &servers); err != nil {
		log.Fatal(err)
	}
	tools, err := mcptools.Open(ctx, "examples/refund-desk", servers, mcptools.Config{Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()

	// What the engine is handed: nothing has started yet.
	var callTool func(context.Context, string, map[string]any) (any, error) = tools.Call

	order, err := callTool(ctx, "orders.lookup_order", map[string]any{"order_id": "A-1001"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(order.(map[string]any)["status"])
}
