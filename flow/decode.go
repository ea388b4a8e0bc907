package flow

import (
	"math"
	"strconv"
	"strings"
)

// decoder turns a parsed JSON object into a Flow, noting every value of the
// wrong type and every key the DSL does not define rather than stopping at
// the first.
type decoder struct {
	info *loadInfo
}

func (d *decoder) problem(code, path, msg string) {
	d.info.problems = append(d.info.problems, Problem{Code: code, Message: msg, Path: path})
	d.info.broken[path] = true
}

func (d *decoder) wrong(path, want string) {
	d.problem(CodeWrongType, path, path+" must be "+want)
}

func (d *decoder) unknown(path, key string) {
	d.problem(CodeUnknownKey, join(path, key), "Unknown key "+strconv.Quote(key))
}

func (d *decoder) object(v *jvalue, path string) ([]jmember, bool) {
	if v.kind != jObject {
		d.wrong(path, "an object")
		return nil, false
	}
	return v.obj, true
}

func (d *decoder) str(v *jvalue, path string) string {
	if v.kind != jString {
		d.wrong(path, "a string")
		return ""
	}
	return v.s
}

func (d *decoder) boolean(v *jvalue, path string) bool {
	if v.kind != jBool {
		d.wrong(path, "true or false")
		return false
	}
	return v.b
}

// whole reads a whole number; 3 and 3.0 are both three.
func (d *decoder) whole(v *jvalue, path string) int {
	if v.kind == jNumber {
		if n, err := strconv.Atoi(v.s); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(v.s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int(f)
		}
	}
	d.wrong(path, "a whole number")
	return 0
}

func (d *decoder) number(v *jvalue, path string) *float64 {
	if v.kind == jNumber {
		if f, err := strconv.ParseFloat(v.s, 64); err == nil {
			return &f
		}
	}
	d.wrong(path, "a number")
	return nil
}

// strs reads a list of strings; a list given is never nil.
func (d *decoder) strs(v *jvalue, path string) []string {
	if v.kind != jArray {
		d.wrong(path, "a list of strings")
		return nil
	}
	out := make([]string, 0, len(v.arr))
	for i, e := range v.arr {
		out = append(out, d.str(e, index(path, i)))
	}
	return out
}

// strMap reads an object of strings; an object given is never nil.
func (d *decoder) strMap(v *jvalue, path string) map[string]string {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(mems))
	for _, m := range mems {
		out[m.key] = d.str(m.val, join(path, m.key))
	}
	return out
}

func (d *decoder) flow(v *jvalue) *Flow {
	f := &Flow{loaded: d.info}
	for _, m := range v.obj {
		path := join("", m.key)
		d.info.keys[m.key] = true
		switch m.key {
		case "version":
			f.Version = d.str(m.val, path)
		case "start":
			f.Start = d.str(m.val, path)
		case "name":
			f.Name = d.str(m.val, path)
		case "description":
			f.Description = d.str(m.val, path)
		case "kind":
			f.Kind = d.str(m.val, path)
		case "inputs":
			f.Inputs = d.strs(m.val, path)
		case "outputs":
			f.Outputs = d.strs(m.val, path)
		case "requires":
			f.Requires = d.requires(m.val, path)
		case "tools":
			f.Tools = d.tools(m.val, path)
		case "state":
			f.State = d.state(m.val, path)
		case "conversation":
			f.Conversation = d.boolean(m.val, path)
		case "nodes":
			f.Nodes = list(d, m.val, path, "a list of nodes", d.node)
		case "edges":
			f.Edges = list(d, m.val, path, "a list of edges", d.edge)
		case "views":
			f.Views = raw(m.val)
		case "shell":
			f.Shell = raw(m.val)
		case "createdBy":
			f.CreatedBy = raw(m.val)
		case "lastUpdatedBy":
			f.LastUpdatedBy = raw(m.val)
		default:
			d.unknown("", m.key)
		}
	}
	return f
}

func (d *decoder) requires(v *jvalue, path string) *Requires {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	r := &Requires{}
	for _, m := range mems {
		p := join(path, m.key)
		switch m.key {
		case "env":
			r.Env = d.strs(m.val, p)
		case "packages":
			r.Packages = d.strMap(m.val, p)
		case "services":
			r.Services = d.strMap(m.val, p)
		case "mcp":
			servers, ok := d.object(m.val, p)
			if !ok {
				continue
			}
			r.MCP = make(map[string]*MCPServer, len(servers))
			for _, s := range servers {
				r.MCP[s.key] = d.mcpServer(s.val, join(p, s.key))
			}
		default:
			d.unknown(path, m.key)
		}
	}
	return r
}

func (d *decoder) mcpServer(v *jvalue, path string) *MCPServer {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	s := &MCPServer{}
	for _, m := range mems {
		p := join(path, m.key)
		switch m.key {
		case "command":
			s.Command = d.str(m.val, p)
		case "args":
			s.Args = d.strs(m.val, p)
		case "env":
			s.Env = d.strMap(m.val, p)
		case "tools":
			if m.val.kind != jArray {
				d.wrong(p, "a list of tools")
				continue
			}
			s.Tools = make([]Tool, 0, len(m.val.arr))
			for i, e := range m.val.arr {
				t, _ := d.toolObject(e, index(p, i))
				s.Tools = append(s.Tools, t)
			}
		default:
			d.unknown(path, m.key)
		}
	}
	return s
}

// tools reads a flow's tools: each a bare name or an object.
func (d *decoder) tools(v *jvalue, path string) []Tool {
	if v.kind != jArray {
		d.wrong(path, "a list of tools")
		return nil
	}
	out := make([]Tool, 0, len(v.arr))
	for i, e := range v.arr {
		p := index(path, i)
		switch e.kind {
		case jString:
			out = append(out, Tool{Name: e.s})
		case jObject:
			t, _ := d.toolObject(e, p)
			out = append(out, t)
		default:
			d.wrong(p, "a tool's name or an object with its name")
			out = append(out, Tool{})
		}
	}
	return out
}

func (d *decoder) toolObject(v *jvalue, path string) (Tool, bool) {
	mems, ok := d.object(v, path)
	if !ok {
		return Tool{}, false
	}
	t := Tool{object: true}
	for _, m := range mems {
		p := join(path, m.key)
		switch m.key {
		case "name":
			t.Name = d.str(m.val, p)
		case "description":
			t.Description = d.str(m.val, p)
		case "inputs":
			t.Inputs = raw(m.val)
		default:
			d.unknown(path, m.key)
		}
	}
	return t, true
}

func (d *decoder) state(v *jvalue, path string) map[string]*Channel {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	out := make(map[string]*Channel, len(mems))
	for _, m := range mems {
		out[m.key] = d.channel(m.val, join(path, m.key))
	}
	return out
}

func (d *decoder) channel(v *jvalue, path string) *Channel {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	c := &Channel{}
	for _, m := range mems {
		p := join(path, m.key)
		switch m.key {
		case "type":
			c.Type = d.str(m.val, p)
		case "description":
			c.Description = d.str(m.val, p)
		case "reducer":
			c.Reducer = d.str(m.val, p)
		case "default":
			c.Default = raw(m.val)
		case "remembers":
			c.Remembers = d.boolean(m.val, p)
		case "accept":
			c.Accept = d.str(m.val, p)
		default:
			d.unknown(path, m.key)
		}
	}
	return c
}

// list decodes a JSON array with one, or says it wanted what.
func list[T any](d *decoder, v *jvalue, path, what string, one func(*jvalue, string) T) []T {
	if v.kind != jArray {
		d.wrong(path, what)
		return nil
	}
	out := make([]T, 0, len(v.arr))
	for i, e := range v.arr {
		out = append(out, one(e, index(path, i)))
	}
	return out
}

func (d *decoder) node(v *jvalue, path string) *Node {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	n := &Node{keys: make([]string, 0, len(mems))}
	for _, m := range mems {
		p := join(path, m.key)
		known := true
		switch m.key {
		case "id":
			n.ID = d.str(m.val, p)
		case "handler":
			n.Handler = d.str(m.val, p)
		case "type":
			n.Type = Kind(d.str(m.val, p))
		case "description":
			n.Description = d.str(m.val, p)
		case "retry":
			n.Retry = d.retry(m.val, p)
		case "onError":
			n.OnError = d.str(m.val, p)
		case "approval":
			n.Approval = d.approval(m.val, p)
		case "prompt":
			n.Prompt = d.str(m.val, p)
		case "output":
			n.Output = d.str(m.val, p)
		case "schema":
			n.Schema = d.schema(m.val, p)
		case "tool":
			n.Tool = d.str(m.val, p)
		case "args":
			n.Args = raw(m.val)
		case "calls":
			n.Calls = d.str(m.val, p)
		case "over":
			n.Over = d.str(m.val, p)
		case "to":
			n.To = d.str(m.val, p)
		case "as":
			n.As = d.str(m.val, p)
		case "ask":
			n.Ask = d.str(m.val, p)
		case "agent":
			n.Agent = d.str(m.val, p)
		case "agents":
			n.Agents = d.strs(m.val, p)
		case "input":
			n.Input = raw(m.val)
		default:
			known = false
			d.unknown(path, m.key)
		}
		if known {
			n.keys = append(n.keys, m.key)
		}
	}
	return n
}

func (d *decoder) retry(v *jvalue, path string) *Retry {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	r := &Retry{}
	for _, m := range mems {
		switch m.key {
		case "maxAttempts":
			r.MaxAttempts = d.whole(m.val, join(path, m.key))
		default:
			d.unknown(path, m.key)
		}
	}
	return r
}

func (d *decoder) approval(v *jvalue, path string) *Approval {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	a := &Approval{}
	for _, m := range mems {
		p := join(path, m.key)
		switch m.key {
		case "ask":
			a.Ask = d.str(m.val, p)
		case "show":
			a.Show = d.strs(m.val, p)
		case "onReject":
			a.OnReject = d.str(m.val, p)
		case "why":
			a.Why = d.str(m.val, p)
		default:
			d.unknown(path, m.key)
		}
	}
	return a
}

func (d *decoder) schema(v *jvalue, path string) *Schema {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	s := &Schema{keys: make([]string, 0, len(mems))}
	for _, m := range mems {
		p := join(path, m.key)
		known := true
		switch m.key {
		case "type":
			s.Type = d.str(m.val, p)
		case "description":
			s.Description = d.str(m.val, p)
		case "properties":
			props, ok := d.object(m.val, p)
			if !ok {
				continue
			}
			s.Properties = make(map[string]*Schema, len(props))
			for _, prop := range props {
				s.Properties[prop.key] = d.schema(prop.val, join(p, prop.key))
			}
		case "required":
			s.Required = d.strs(m.val, p)
		case "items":
			s.Items = d.schema(m.val, p)
		case "enum":
			if m.val.kind != jArray {
				d.wrong(p, "a list")
				continue
			}
			s.Enum = toAny(m.val).([]any)
		case "minimum":
			s.Minimum = d.number(m.val, p)
		case "maximum":
			s.Maximum = d.number(m.val, p)
		case "minLength":
			n := d.whole(m.val, p)
			s.MinLength = &n
		case "maxLength":
			n := d.whole(m.val, p)
			s.MaxLength = &n
		default:
			known = false
			d.problem(CodeSchemaUnknownKeyword, p, "Unknown schema keyword "+strconv.Quote(m.key)+
				": a schema says only "+strings.Join(SchemaKeywords, ", "))
		}
		if known {
			s.keys = append(s.keys, m.key)
		}
	}
	return s
}

func (d *decoder) edge(v *jvalue, path string) *Edge {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	e := &Edge{keys: make([]string, 0, len(mems))}
	for _, m := range mems {
		p := join(path, m.key)
		known := true
		switch m.key {
		case "from":
			e.From = d.str(m.val, p)
		case "to":
			e.To = d.str(m.val, p)
		case "type":
			e.Type = d.str(m.val, p)
		case "router":
			e.Router = d.str(m.val, p)
		case "routes":
			e.Routes = d.strMap(m.val, p)
		case "when":
			e.When = d.strMap(m.val, p)
		case "limits":
			lims, ok := d.object(m.val, p)
			if !ok {
				continue
			}
			e.Limits = make(map[string]*Limit, len(lims))
			for _, l := range lims {
				e.Limits[l.key] = d.limit(l.val, join(p, l.key))
			}
		default:
			known = false
			d.unknown(path, m.key)
		}
		if known {
			e.keys = append(e.keys, m.key)
		}
	}
	return e
}

func (d *decoder) limit(v *jvalue, path string) *Limit {
	mems, ok := d.object(v, path)
	if !ok {
		return nil
	}
	l := &Limit{}
	for _, m := range mems {
		p := join(path, m.key)
		switch m.key {
		case "max":
			l.Max = d.whole(m.val, p)
		case "then":
			l.Then = d.str(m.val, p)
		case "per":
			l.Per = d.str(m.val, p)
		default:
			d.unknown(path, m.key)
		}
	}
	return l
}
