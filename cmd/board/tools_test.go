package main

import (
	"slices"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// TestToolsCommands: list (the fleet's servers, one agent's tools), get,
// set, and the on/off shortcuts in each of their forms; the board keeps
// each switch and the agent is told.
func TestToolsCommands(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	api := boardv1connect.NewToolServiceClient(f.b.Client(f.admin))
	on := func() []string {
		res, err := api.GetSwitches(t.Context(), &boardv1.GetSwitchesRequest{Agent: "refund-bot"})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetSwitches().GetOn()
	}

	out := f.ok(t, "tools", "list")
	if !regexpLine(out, `^crm\s+lookup\s+refund-bot\s+-$`) || !regexpLine(out, `^crm\s+refund\s+refund-bot\s+-$`) {
		t.Errorf("tools list:\n%s", out)
	}
	if out := f.ok(t, "tools", "on", "refund-bot", "crm/lookup"); out != "refund-bot: crm/lookup on; the agent was told now\n" {
		t.Errorf("tools on: %q", out)
	}
	if got := on(); !slices.Equal(got, []string{"crm.lookup"}) {
		t.Fatalf("after tools on, the board has %v on", got)
	}
	f.ok(t, "tools", "set", "refund-bot", "crm", "refund", "on")
	f.ok(t, "tools", "off", "refund-bot", "crm.lookup")
	if got := on(); !slices.Equal(got, []string{"crm.refund"}) {
		t.Fatalf("after set on and off, the board has %v on", got)
	}
	f.ok(t, "tools", "on", "refund-bot", "crm", "lookup")
	if got := on(); len(got) != 2 {
		t.Fatalf("after tools on SERVER TOOL, the board has %v on", got)
	}
	f.ok(t, "tools", "off", "refund-bot", "crm", "lookup")

	out = f.ok(t, "tools", "list", "refund-bot")
	if !regexpLine(out, `^crm\s+lookup\s+off$`) || !regexpLine(out, `^crm\s+refund\s+on$`) {
		t.Errorf("tools list refund-bot:\n%s", out)
	}
	type row struct {
		Agent, Server, Tool string
		On                  bool
	}
	rows := decodeJSON[[]row](t, f.ok(t, "tools", "list", "refund-bot", "-o", "json"))
	if !slices.Equal(rows, []row{{"refund-bot", "crm", "lookup", false}, {"refund-bot", "crm", "refund", true}}) {
		t.Errorf("tools list refund-bot -o json = %+v", rows)
	}
	out = f.ok(t, "tools", "get", "refund-bot")
	if !regexpLine(out, `^on\s+crm.refund$`) || !regexpLine(out, `^set by\s+ops$`) || !regexpLine(out, `^board has spoken\s+yes$`) {
		t.Errorf("tools get:\n%s", out)
	}
	type serverJSON struct {
		Name  string `json:"name"`
		Tools []struct {
			Name string   `json:"name"`
			On   []string `json:"on"`
		} `json:"tools"`
	}
	servers := decodeJSON[[]serverJSON](t, f.ok(t, "tools", "list", "-o", "json"))
	if len(servers) != 1 || servers[0].Name != "crm" || len(servers[0].Tools) != 2 || !slices.Equal(servers[0].Tools[1].On, []string{"refund-bot"}) {
		t.Errorf("tools list -o json = %+v", servers)
	}

	_, _, err := f.board(t, "tools", "on", "refund-bot", "crm/delete")
	wantExit(t, err, 1, "crm.delete")
	_, _, err = f.board(t, "tools", "on", "refund-bot", "crm")
	wantExit(t, err, 2, "SERVER/TOOL")
	_, _, err = f.board(t, "tools", "set", "refund-bot", "crm", "lookup", "maybe")
	wantExit(t, err, 2, "on or off")
	_, _, err = f.board(t, "tools", "get", "nobody")
	wantExit(t, err, 1, "nobody", "never linked")
}

// TestMergeServer: a server the board cut between two pages is one
// server, each tool's agents together.
func TestMergeServer(t *testing.T) {
	t.Parallel()
	s := &boardv1.Server{Name: "crm", Agents: []string{"a"}, Online: []string{"a"},
		Tools: []*boardv1.ServerTool{{Name: "lookup", Agents: []string{"a"}, On: []string{"a"}}}}
	mergeServer(s, &boardv1.Server{Name: "crm", Agents: []string{"b"},
		Tools: []*boardv1.ServerTool{{Name: "lookup", Agents: []string{"b"}}, {Name: "refund", Agents: []string{"b"}}}})
	if !slices.Equal(s.Agents, []string{"a", "b"}) || len(s.Tools) != 2 || !slices.Equal(s.Tools[0].Agents, []string{"a", "b"}) ||
		!slices.Equal(s.Tools[0].On, []string{"a"}) || s.Tools[1].Name != "refund" {
		t.Errorf("mergeServer = %v", s)
	}
}
