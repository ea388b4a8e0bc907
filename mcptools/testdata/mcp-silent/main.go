// Command mcp-silent is an MCP server over stdio that starts, answers the
// handshake, and then never answers tools/list: the server an agent must not
// wait on forever when it asks what tools a server has. It has one tool,
// "ping", which it would list if it answered. It exits when its stdin closes.
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
		fmt.Fprintln(os.Stderr, "mcp-silent:", err)
		os.Exit(1)
	}
}

type pong struct {
	Pong bool `json:"pong"`
}

func run(ctx context.Context) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "mcp-silent", Version: "v0.1.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ping", Description: "Answer pong."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, pong, error) {
			return nil, pong{Pong: true}, nil
		})
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				<-ctx.Done() // until the client gives up, or the connection ends
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	})
	err := server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
