package mcptools

import (
	"errors"
	"fmt"
)

// Refusals. [Set.Call] returns them wrapped, with the name it was given in the
// message; test for them with errors.Is.
var (
	// ErrNoServerName: the name has no dot, so it names no server.
	ErrNoServerName = errors.New("not a <server>.<tool> name")
	// ErrUnknownServer: the flow declares no server by that name.
	ErrUnknownServer = errors.New("no such mcp server in requires.mcp")
	// ErrUndeclared: the server is declared, the tool is not declared for it.
	ErrUndeclared = errors.New("tool not declared for its server in requires.mcp")
	// ErrClosed: the Set was closed.
	ErrClosed = errors.New("mcp tools closed")
)

// ToolError is a tool's own refusal or failure: the call reached the server,
// and the server answered with an error result. Its text is meant for whoever
// asked for the call, usually a model, which can only recover from what it is
// told; it may hold personal data, so it is returned and never logged.
type ToolError struct {
	Name string // "<server>.<tool>"
	Text string // what the tool said
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("mcp tool %s: %s", e.Name, e.Text)
}
