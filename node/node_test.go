package node_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/serve"
)

// TestConfigChecked: a Config that is wrong is refused by Serve, Run and
// Cancel alike, before anything is said or opened.
func TestConfigChecked(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	tests := []struct {
		name string
		cfg  node.Config
		is   error // when set, the error must be it
	}{
		{name: "no dir", cfg: node.Config{}},
		{name: "a board without a token", cfg: node.Config{Dir: dir, BoardURL: "http://127.0.0.1:1"}},
		{name: "beyond loopback", cfg: node.Config{Dir: dir, Listen: ":8080"}, is: serve.ErrNotLoopback},
		{name: "no port", cfg: node.Config{Dir: dir, Listen: "127.0.0.1"}},
		{name: "an unknown journal detail", cfg: node.Config{Dir: dir, JournalDetail: "everything"}},
		{name: "a negative journal cap", cfg: node.Config{Dir: dir, JournalMaxBytes: -1}},
		{name: "an input with no name", cfg: node.Config{Dir: dir, Input: map[string]string{"": "x"}}},
		{name: "a negative wait for the switches", cfg: node.Config{Dir: dir, SwitchesWithin: -time.Second}},
		{name: "a long reason", cfg: node.Config{Dir: dir, Reason: strings.Repeat("x", 4097)}},
		{name: "health checks too often", cfg: node.Config{Dir: dir, HealthInterval: 500 * time.Millisecond}},
		{name: "health checks too seldom", cfg: node.Config{Dir: dir, HealthInterval: 25 * time.Hour}},
		{name: "a health check without a check", cfg: node.Config{Dir: dir, HealthChecks: []node.HealthCheck{{Name: "printer"}}}},
		{name: "a health check without a name", cfg: node.Config{Dir: dir, HealthChecks: []node.HealthCheck{{Check: func(context.Context) error { return nil }}}}},
	}
	for _, tt := range tests {
		for _, start := range []struct {
			name string
			fn   func(context.Context, node.Config) error
		}{{"Serve", node.Serve}, {"Run", node.Run}, {"Cancel", node.Cancel}} {
			t.Run(tt.name+"/"+start.name, func(t *testing.T) {
				cfg := tt.cfg
				out := &lines{}
				cfg.Stdout, cfg.Stderr = out, out
				err := start.fn(t.Context(), cfg)
				if err == nil || tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("%s(%s) = %v, want an error (%v)", start.name, tt.name, err, tt.is)
				}
				if s := out.String(); s != "" {
					t.Errorf("%s(%s) said %q before refusing", start.name, tt.name, s)
				}
			})
		}
	}
}
