package health_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/symphonix/symphonix/health"
)

// A checker with the agent's own checks and the custom checks of its
// folder's health.json, run for one round.
func Example() {
	// A database that is up, for the custom check to find.
	db, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := fmt.Sprintf(`{"checks": [
		{"name": "orders-db", "tcp": %q},
		{"name": "disk", "command": ["sh", "-c", "echo read-only file system >&2; exit 1"]}
	]}`, db.Addr())
	if err := os.WriteFile(filepath.Join(dir, "health.json"), []byte(file), 0o600); err != nil {
		log.Fatal(err)
	}

	c, err := health.New(health.Options{
		// The agent passes its secrets filter here.
		Detail: func(s string) string { return strings.ReplaceAll(s, "sk-live-123", "[redacted]") },
	})
	if err != nil {
		log.Fatal(err)
	}
	// The agent's own checks: each MCP server, the model, the waiting store.
	if err := c.Register("model", func(context.Context) error {
		return health.Unknownf("model list: 401 for key sk-live-123")
	}); err != nil {
		log.Fatal(err)
	}
	if err := c.Register("waiting", func(context.Context) error { return nil }); err != nil {
		log.Fatal(err)
	}
	specs, err := health.Load(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range specs {
		if err := c.Register(s.Name, s.Check()); err != nil {
			log.Fatal(err)
		}
	}

	r := c.Round(context.Background())
	fmt.Println(r.Status)
	for _, l := range r.Lines {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s: %s %s", l.Name, l.Status, l.Detail)))
	}
	// Output:
	// degraded
	// disk: error exit status 1: read-only file system
	// model: unknown model list: 401 for key [redacted]
	// orders-db: ok
	// waiting: ok
}
