package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newToolsCmd is board tools: which of the MCP tools they declare each
// agent may call. The flow's declaration is the most; the board's switch
// says what of it is on.
func newToolsCmd(a *app) *cobra.Command {
	c := cli.Group("tools", "Read and switch the MCP tools agents may call: list, get, set, on, off")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(toolsList(a, co), toolsGet(a, co), toolsSet(a, co), toolsSwitch(a, co, true), toolsSwitch(a, co, false))
	return c
}

func toolsList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	c := &cobra.Command{
		Use:   "list [AGENT]",
		Short: "List every MCP server's tools, who declares them and who is on; or one agent's tools",
		Args:  cli.MaxArgs("AGENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				sw, err := getSwitches(cmd, bc, args[0])
				if err != nil {
					return err
				}
				type row struct {
					Agent  string `json:"agent"`
					Server string `json:"server"`
					Tool   string `json:"tool"`
					On     bool   `json:"on"`
				}
				rows := []row{}
				t := cli.Table{Header: []string{"SERVER", "TOOL", "SWITCH"}}
				for _, name := range sw.GetDeclared() {
					server, tool, _ := strings.Cut(name, ".")
					on := slices.Contains(sw.GetOn(), name)
					rows = append(rows, row{sw.GetAgent(), server, tool, on})
					t.Append(clip(server, 60), clip(tool, 60), onOff(on))
				}
				return out.Print(a.stdout, t, rows)
			}
			servers, more, err := listServers(cmd, bc, limit)
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"SERVER", "TOOL", "DECLARED BY", "ON FOR"}}
			for _, s := range servers {
				if len(s.GetTools()) == 0 {
					t.Append(clip(s.GetName(), 60), "-", list(s.GetAgents()), "-")
				}
				for _, tl := range s.GetTools() {
					t.Append(clip(s.GetName(), 60), clip(tl.GetName(), 60), clip(strings.Join(tl.GetAgents(), ","), 80), clip(strings.Join(tl.GetOn(), ","), 80))
				}
			}
			if err := out.Print(a.stdout, t, protoJSONs(servers)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	return c
}

// listServers reads up to limit MCP servers, a page at a time, merging a
// server cut between two pages.
func listServers(cmd *cobra.Command, bc *boardClient, limit int) (servers []*boardv1.Server, more bool, err error) {
	req := &boardv1.ListServersRequest{}
	for {
		// One more than wanted, so that a server continued on the next
		// page still counts once.
		req.PageSize = pageSize(limit-len(servers)+1, 1000)
		res, err := bc.tools.ListServers(cmd.Context(), req)
		if err != nil {
			return nil, false, bc.explain(err, "")
		}
		for _, s := range res.GetServers() {
			if n := len(servers); n > 0 && servers[n-1].GetName() == s.GetName() {
				mergeServer(servers[n-1], s)
				continue
			}
			servers = append(servers, s)
		}
		req.PageToken = res.GetNextPageToken()
		if req.PageToken == "" {
			break
		}
		if len(servers) > limit {
			more = true
			break
		}
	}
	if len(servers) > limit {
		return servers[:limit], true, nil
	}
	return servers, more, nil
}

// mergeServer adds to s the rest of it, from the next page.
func mergeServer(s, rest *boardv1.Server) {
	s.Agents = append(s.Agents, rest.GetAgents()...)
	s.Online = append(s.Online, rest.GetOnline()...)
	for _, t := range rest.GetTools() {
		i := slices.IndexFunc(s.Tools, func(x *boardv1.ServerTool) bool { return x.GetName() == t.GetName() })
		if i < 0 {
			s.Tools = append(s.Tools, t)
			continue
		}
		s.Tools[i].Agents = append(s.Tools[i].Agents, t.GetAgents()...)
		s.Tools[i].On = append(s.Tools[i].On, t.GetOn()...)
	}
}

func getSwitches(cmd *cobra.Command, bc *boardClient, agent string) (*boardv1.Switches, error) {
	res, err := bc.tools.GetSwitches(cmd.Context(), &boardv1.GetSwitchesRequest{Agent: agent})
	if err != nil {
		return nil, bc.explain(err, "agent "+agent)
	}
	return res.GetSwitches(), nil
}

func toolsGet(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "get AGENT",
		Short: "Show one agent's switches: the tools it declares, the ones on, who set them and when",
		Args:  cli.Args("AGENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			sw, err := getSwitches(cmd, bc, args[0])
			if err != nil {
				return err
			}
			return out.Print(a.stdout, switchesCard(sw), protoJSON(sw))
		},
	}
	out.AddFlag(c.Flags())
	return c
}

// switchesCard is one agent's switches as a two-column table.
func switchesCard(sw *boardv1.Switches) cli.Table {
	t := cli.Table{Header: []string{"FIELD", "VALUE"}}
	t.Append("agent", clip(sw.GetAgent(), 128))
	spoken := "yes"
	if !sw.GetSpoken() {
		spoken = "no: nobody has decided, so nothing is on"
	}
	t.Append("board has spoken", spoken)
	t.Append("on", list(sw.GetOn()))
	t.Append("declared", list(sw.GetDeclared()))
	t.Append("set by", clip(sw.GetSetBy(), 128))
	t.Append("set at", when(sw.GetSetTime()))
	return t
}

func toolsSet(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "set AGENT SERVER TOOL on|off",
		Short: "Switch one tool of one agent on or off, leaving its other tools as they are",
		Args:  cli.Args("AGENT", "SERVER", "TOOL", "on|off"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var on bool
			switch args[3] {
			case "on":
				on = true
			case "off":
			default:
				return cli.Usagef("%s: %q: want on or off", cmd.CommandPath(), args[3])
			}
			return setSwitch(cmd, a, co, &out, args[0], args[1], args[2], on)
		},
	}
	out.AddFlag(c.Flags())
	return c
}

// toolsSwitch is tools on or tools off: the short form of tools set.
func toolsSwitch(a *app, co *clientOptions, on bool) *cobra.Command {
	var out cli.Output
	verb := onOff(on)
	c := &cobra.Command{
		Use:   verb + " AGENT SERVER TOOL | " + verb + " AGENT SERVER/TOOL",
		Short: "Switch one tool of one agent " + verb + " (tools set AGENT SERVER TOOL " + verb + ")",
		Long: "Switch one tool of one agent " + verb + `, leaving its other tools as they are. The tool is
named by its server and its name, as two arguments or as SERVER/TOOL or SERVER.TOOL.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 || len(args) == 3 {
				return nil
			}
			return cli.Usagef("%s: want AGENT SERVER TOOL, or AGENT SERVER/TOOL (see %s --help)", cmd.CommandPath(), cmd.CommandPath())
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			server, tool := "", ""
			if len(args) == 3 {
				server, tool = args[1], args[2]
			} else {
				var ok bool
				if server, tool, ok = strings.Cut(args[1], "/"); !ok {
					server, tool, ok = strings.Cut(args[1], ".")
				}
				if !ok {
					return cli.Usagef("%s: %q: want SERVER/TOOL, or SERVER and TOOL as two arguments", cmd.CommandPath(), args[1])
				}
			}
			return setSwitch(cmd, a, co, &out, args[0], server, tool, on)
		},
	}
	out.AddFlag(c.Flags())
	return c
}

func setSwitch(cmd *cobra.Command, a *app, co *clientOptions, out *cli.Output, agent, server, tool string, on bool) error {
	if server == "" || tool == "" || strings.Contains(server, ".") {
		return cli.Usagef("%s: %q: want a server name (without a dot) and a tool name", cmd.CommandPath(), server+"/"+tool)
	}
	bc, err := a.dial(co)
	if err != nil {
		return err
	}
	name := server + "." + tool
	res, err := bc.tools.SetToolSwitch(cmd.Context(), &boardv1.SetToolSwitchRequest{Agent: agent, Tool: name, On: on})
	if err != nil {
		return bc.explain(err, "agent "+agent)
	}
	if out.JSON() {
		return cli.PrintJSON(a.stdout, protoJSON(res))
	}
	told := "the agent is told when it next links"
	if res.GetPushed() {
		told = "the agent was told now"
	}
	_, err = fmt.Fprintf(a.stdout, "%s: %s/%s %s; %s\n", clip(agent, 128), clip(server, 128), clip(tool, 128), onOff(on), told)
	return err
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
