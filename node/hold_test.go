package node_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holdServer, set in its environment, makes the test binary the MCP server
// "hold" of holdFlow instead of running tests.
const holdServer = "NODE_TEST_HOLD_SERVER"

// holdAddr is where the hold server's wait tool dials the test.
const holdAddr = "NODE_TEST_HOLD_ADDR"

// holdFlow is an agent of three tool steps on the hold server: note what
// it was given, wait until the test lets it go, note again.
const holdFlow = `{"version": "0.17", "name": "holder", "description": "Notes a topic, waits for a go-ahead, and notes again.",
  "inputs": ["topic"], "outputs": ["after"],
  "requires": {"mcp": {"hold": {"command": %q, "env": {%q: "1", %q: %q},
    "tools": [{"name": "note", "description": "Note what it is given, and answer at once."},
              {"name": "wait", "description": "Wait until the go-ahead, and answer with it."}]}}},
  "state": {"topic": {"type": "string", "description": "What to note."},
            "noted": {"type": "object", "description": "The first note."},
            "held": {"type": "object", "description": "The go-ahead."},
            "after": {"type": "object", "description": "The second note."}},
  "start": "first",
  "nodes": [{"id": "first", "type": "tool", "tool": "hold.note", "args": {"what": "{{topic}}"}, "output": "noted"},
            {"id": "wait", "type": "tool", "tool": "hold.wait", "args": {}, "output": "held"},
            {"id": "after", "type": "tool", "tool": "hold.note", "args": {"what": "after the wait"}, "output": "after"}],
  "edges": [{"from": "first", "to": "wait"}, {"from": "wait", "to": "after"}, {"from": "after", "to": "END"}]}`

// hold is a hold server's wait tool as the test sees it: each call dials
// the test's listener, and waits for the line the test writes back.
type hold struct {
	ln    net.Listener
	calls chan net.Conn
}

// newHoldDesk writes holdFlow into a folder of the test's own, its hold
// server this test binary dialling a listener of the test's, and returns
// the folder and the hold.
func newHoldDesk(t *testing.T) (string, *hold) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hold{ln: ln, calls: make(chan net.Conn, 4)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			h.calls <- c
		}
	}()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "holder")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := fmt.Sprintf(holdFlow, self, holdServer, holdAddr, ln.Addr().String())
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(f), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, h
}

// entered waits for a call of the wait tool to be in flight, and returns
// it: write a line to it to let the call answer.
func (h *hold) entered(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-h.calls:
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "entered\n" {
			t.Fatalf("the wait tool said %q, %v; want entered", line, err)
		}
		return c
	case <-time.After(time.Minute):
		t.Fatal("the wait tool was not called within a minute")
	}
	return nil
}

type noteIn struct {
	What string `json:"what,omitempty" jsonschema:"what to note"`
}

type noteOut struct {
	Noted string `json:"noted"`
}

type waitOut struct {
	Released string `json:"released"`
}

// serveHold is the hold server on stdin and stdout, until its client
// closes stdin: note answers at once; wait dials holdAddr, says entered,
// and answers with the line it reads back.
func serveHold() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server := mcp.NewServer(&mcp.Implementation{Name: "hold", Version: "v0.0.1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "note", Description: "Note what it is given, and answer at once."},
		func(_ context.Context, _ *mcp.CallToolRequest, in noteIn) (*mcp.CallToolResult, noteOut, error) {
			return nil, noteOut{Noted: in.What}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "wait", Description: "Wait until the go-ahead, and answer with it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, waitOut, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", os.Getenv(holdAddr))
			if err != nil {
				return nil, waitOut{}, err
			}
			defer c.Close()
			if _, err := c.Write([]byte("entered\n")); err != nil {
				return nil, waitOut{}, err
			}
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return nil, waitOut{}, err
			}
			return nil, waitOut{Released: strings.TrimSpace(line)}, nil
		})
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "hold:", err)
		return 1
	}
	return 0
}
