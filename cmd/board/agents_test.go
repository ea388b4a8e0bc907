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
	wantExit(t, err, 1, "nobody", "not found")

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
		v := decodeJSON[struct {
			Agent     map[string]any `json:"agent"`
			Forgotten bool           `json:"forgotten"`
		}](t, l)
		if v.Agent["name"] != "refund-bot" || v.Forgotten {
			t.Errorf("agents watch line %q: want refund-bot's", l)
		}
	}
	text, stop := f.watch(t, "agents", "watch")
	boardtest.Eventually(t, 10*time.Second, "the snapshot as a line", func() bool {
		return regexpLine(text.String(), `^\d{4}-\S+  refund-bot  online  health=-  paused=no$`)
	})
	stop()
}

// TestWatchEndedByBoard: a board that shuts down ends a watch; the command
// fails, saying so, rather than hang or exit 0.
func TestWatchEndedByBoard(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	lines, stop := f.watch(t, "agents", "watch")
	boardtest.Eventually(t, 10*time.Second, "the snapshot", func() bool { return strings.Contains(lines.String(), "refund-bot") })
	f.b.Stop()
	err := stop()
	wantExit(t, err, 1, "watch", "going away")
}

// TestSanitize: what agents write cannot reach the terminal as control
// characters or reordering marks.
func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want  string
		multiline bool
	}{
		{"refund 40 EUR", "refund 40 EUR", false},
		{"\x1b[2Japprove? [y/N] y\r", "\ufffd[2Japprove? [y/N] y\ufffd", false},
		{"a\nb\tc", "a\ufffdb c", false},
		{"a\nb", "a\nb", true},
		{"pay \u202eRUE 04\u202c", "pay \ufffdRUE 04\ufffd", false},
		{"\u0085next", "\ufffdnext", false},
	} {
		if got := sanitize(tc.in, tc.multiline); got != tc.want {
			t.Errorf("sanitize(%q, %v) = %q, want %q", tc.in, tc.multiline, got, tc.want)
		}
	}
	if got := clip("a\x1b[31m  long   line", 8); got != "a\ufffd[31m …" {
		t.Errorf("clip = %q", got)
	}
}

// TestAgentsForget: forget needs a reason and, without a terminal, --yes
// on the command line; the board refuses an online agent, saying so; an
// agent offline for the board's forget-after is forgotten, and is then not
// found.
func TestAgentsForget(t *testing.T) {
	t.Parallel()
	f := startFleet(t, boardtest.Options{ForgetAfter: time.Millisecond, OfflineGrace: -1})

	_, _, err := f.board(t, "agents", "forget", "refund-bot", "--yes")
	wantExit(t, err, 2, "--reason")
	_, _, err = f.board(t, "agents", "forget", "refund-bot", "--reason", "retired")
	wantExit(t, err, 2, "no terminal", "--yes")
	_, _, err = f.board(t, "agents", "forget", "refund-bot", "--reason", "retired", "--yes")
	wantExit(t, err, 1, "refund-bot", "online")

	f.unlink()
	boardtest.Eventually(t, time.Minute, "refund-bot offline", func() bool {
		return regexpLine(f.ok(t, "agents", "list"), `^refund-bot\s+offline\s`)
	})
	if out := f.ok(t, "agents", "forget", "refund-bot", "--reason", "retired", "--yes"); !strings.HasPrefix(out, "agent refund-bot forgotten (last seen ") {
		t.Errorf("agents forget: %q", out)
	}
	_, _, err = f.board(t, "agents", "get", "refund-bot")
	wantExit(t, err, 1, "refund-bot", "not found")
	if out := f.ok(t, "agents", "list", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("agents list after forgetting: %q, want []", out)
	}
}
