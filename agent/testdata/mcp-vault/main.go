// Command mcp-vault is an MCP server over stdio for the agent's tests: two
// tools, "peek" (harmless) and "empty" (the one an operator switches off),
// a third it serves but the test flow does not declare, "audit", and
// "look", which takes any arguments and says the one named "why" back, for
// the handler an MCP tool provides. Every
// call it receives is appended, one line a call, to the file VAULT_CALLS
// names, so a test can tell a refused call never reached it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-vault:", err)
		os.Exit(1)
	}
}

type result struct {
	Tool string `json:"tool"`
}

type looked struct {
	Tool string `json:"tool"`
	Why  string `json:"why"`
}

func run(ctx context.Context) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "mcp-vault", Version: "v0.1.0"}, nil)
	for _, name := range []string{"peek", "empty", "audit"} {
		mcp.AddTool(server, &mcp.Tool{Name: name, Description: "The vault's " + name + "."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, result, error) {
				if err := record(name); err != nil {
					return nil, result{}, err
				}
				return nil, result{Tool: name}, nil
			})
	}
	mcp.AddTool(server, &mcp.Tool{Name: "look", Description: "Look into the vault, for a reason."},
		func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, looked, error) {
			if err := record("look"); err != nil {
				return nil, looked{}, err
			}
			why, _ := args["why"].(string)
			return nil, looked{Tool: "look", Why: why}, nil
		})
	err := server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func record(name string) error {
	path := os.Getenv("VAULT_CALLS")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, name)
	return err
}
