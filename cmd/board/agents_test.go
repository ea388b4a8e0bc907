package main

import (
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestAgentsCommands: list, get and watch show the linked agent, as a
// table and as JSON with the API's snake_case names.
func TestAgentsCommands(t *testing.T) {
	t.Parallel()
	f := startFleet(t)

	out := f.ok(t, "agents", "list")
	if !strings.HasPrefix(out, "NAME") || !regexpLine(out, `^refund-bot\s+online\s+-\s+no\s+2\s+\d{4}-`) {
		t.Errorf("agents list:\n%s", out)
	}
	type agentJSON struct {
		Name         string   `json:"name"`
		State        string   `json:"state"`
		Tools        []string `json:"tools"`
		LastSeenTime string   `json:"last_seen_time"`
	}
	list := decodeJSON[[]agentJSON](t, f.ok(t, "agents", "list", "-o", "json"))
	if len(list) != 1 || list[0].Name != "refund-bot" || list[0].State != "AGENT_STATE_ONLINE" ||
		strings.Join(list[0].Tools, ",") != "crm.lookup,crm.refund" || list[0].LastSeenTime == "" {
		t.Errorf("agents list -o json = %+v", list)
	}

	out = f.ok(t, "agents", "get", "refund-bot")
	for _, want := range []string{"refunds small orders", "crm.lookup,crm.refund", "online"} {
		if !strings.Contains(out, want) {
			t.Errorf("agents get: %q missing:\n%s", want, out)
		}
	}
	one := decodeJSON[agentJSON](t, f.ok(t, "agents", "get", "refund-bot", "--output", "json"))
	if one.Name != "refund-bot" {
		t.Errorf("agents get -o json = %+v", one)
	}
	_, _, err := f.board(t, "agents", "get", "nobody")
	wantExit(t, err, 1, "agent nobody")

	// watch: the agent as it stands first, then a change (it goes
	// offline when its link ends), until interrupted.
	lines, stop := f.watch(t, "agents", "watch", "-o", "json")
	boardtest.Eventually(t, 10*time.Second, "the snapshot", func() bool {
		return strings.Contains(lines.String(), `"AGENT_STATE_ONLINE"`)
	})
	if err := stop(); err != nil {
		t.Errorf("agents watch, interrupted: %v, want nil", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(lines.String()), "\n") {
		v := decodeJSON[map[string]map[string]any](t, l)
		if v["agent"]["name"] != "refund-bot" {
			t.Errorf("agents watch line %q: want refund-bot's", l)
		}
	}
	text, stop := f.watch(t, "agents", "watch")
	boardtest.Eventually(t, 10*time.Second, "the snapshot as a line", func() bool {
		return regexpLine(text.String(), `^\d{4}-\S+  refund-bot  online  health=-  paused=no$`)
	})
	stop()
}
