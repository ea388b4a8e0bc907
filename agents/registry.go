package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/symphonix/symphonix/flow"
)

// FileName is the registry's file in an agent's folder.
const FileName = "agents.json"

// Bounds of a registry.
const (
	// MaxEntries is how many agents one registry holds.
	MaxEntries = 256
	// MaxFileBytes is the largest registry file read.
	MaxFileBytes = 256 << 10
)

// Spec is a registry as written: the agents by name, each with where its
// flow is — a folder holding flow.json, or a .json file — relative to
// Options.Dir.
type Spec struct {
	Agents []Entry
}

// Entry is one registered agent.
type Entry struct {
	Name string
	Flow string
}

// Options is how New reads the flows a Spec names.
type Options struct {
	// Dir: what a relative path is relative to. "" is the working
	// directory.
	Dir string
	// Flows supplies flows directly, by the path an Entry names, instead
	// of reading them. nil: every flow is read.
	Flows map[string]*flow.Flow
}

// Registry is the agents a flow may delegate to, by name, each with its
// flow and contract. Lookups are map lookups on a name already matched
// against flow.AgentNamePattern. Safe for concurrent reads.
type Registry struct {
	agents  map[string]*Agent
	names   []string     // in the order registered
	lookups atomic.Int64 // map lookups made, for the tests that nothing unchecked is looked up
}

// Agent is one registered agent.
type Agent struct {
	Name string
	// Path is where its flow was read from; "" for a flow supplied in
	// Options.Flows.
	Path     string
	Flow     *flow.Flow
	Contract Contract
}

// Load reads the registry file at path (agents.json) and builds it, with
// relative paths relative to the file's folder. The file is
//
//	{ "agents": { "<name>": "<path>", … } }
//
// or the same as a list, { "agents": [ { "name": …, "flow": … }, … ] }.
func Load(path string) (*Registry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(CodeInvalidRegistry, "", fmt.Sprintf("the registry %s cannot be read: %v", filepath.Base(path), pathless(err)))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fail(CodeInvalidRegistry, "", fmt.Sprintf("the registry %s cannot be read: %v", filepath.Base(path), pathless(err)))
	}
	if len(data) > MaxFileBytes {
		return nil, fail(CodeInvalidRegistry, "", fmt.Sprintf("the registry %s is larger than %d bytes", filepath.Base(path), MaxFileBytes))
	}
	spec, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return New(spec, Options{Dir: filepath.Dir(path)})
}

// pathless is err without the path an *fs.PathError repeats.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse reads a registry file's text into a Spec. A name given twice is
// DUPLICATE_AGENT (in either form); anything else wrong with the file is
// INVALID_REGISTRY, and with one entry INVALID_REGISTRY_ENTRY.
func Parse(data []byte) (Spec, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return Spec{}, fail(CodeInvalidRegistry, "", `the registry is not a JSON object: it is { "agents": { "<name>": "<path>" } }`)
	}
	for k := range top {
		if k != "agents" {
			return Spec{}, fail(CodeInvalidRegistry, "", fmt.Sprintf("the registry has key %q: it has only \"agents\"", clipName(k)))
		}
	}
	raw, ok := top["agents"]
	if !ok {
		return Spec{}, fail(CodeInvalidRegistry, "", `the registry has no "agents"`)
	}
	var spec Spec
	switch t := bytes.TrimSpace(raw); {
	case len(t) > 0 && t[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(t))
		if _, err := dec.Token(); err != nil {
			return Spec{}, fail(CodeInvalidRegistry, "", `"agents" is not an object`)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return Spec{}, fail(CodeInvalidRegistry, "", `"agents" is not an object`)
			}
			name, _ := tok.(string)
			var path any
			if err := dec.Decode(&path); err != nil {
				return Spec{}, fail(CodeInvalidRegistry, "", `"agents" is not an object`)
			}
			p, ok := path.(string)
			if !ok {
				return Spec{}, fail(CodeInvalidRegistryEntry, name, fmt.Sprintf("agents.%s must be the path of its flow, a string", clipName(name)))
			}
			spec.Agents = append(spec.Agents, Entry{Name: name, Flow: p})
			if len(spec.Agents) > MaxEntries {
				return Spec{}, tooMany()
			}
		}
	case len(t) > 0 && t[0] == '[':
		var list []map[string]any
		if err := json.Unmarshal(t, &list); err != nil {
			return Spec{}, fail(CodeInvalidRegistry, "", `"agents" must be an object of names and paths, or a list of { "name", "flow" }`)
		}
		if len(list) > MaxEntries {
			return Spec{}, tooMany()
		}
		for i, m := range list {
			var e Entry
			for k, v := range m {
				s, ok := v.(string)
				switch {
				case k != "name" && k != "flow":
					return Spec{}, fail(CodeInvalidRegistryEntry, "", fmt.Sprintf("agents[%d] has key %q: an entry has only \"name\" and \"flow\"", i, clipName(k)))
				case !ok:
					return Spec{}, fail(CodeInvalidRegistryEntry, "", fmt.Sprintf("agents[%d].%s must be a string", i, k))
				case k == "name":
					e.Name = s
				default:
					e.Flow = s
				}
			}
			spec.Agents = append(spec.Agents, e)
		}
	default:
		return Spec{}, fail(CodeInvalidRegistry, "", `"agents" must be an object of names and paths, or a list of { "name", "flow" }`)
	}
	return spec, nil
}

func tooMany() *Error {
	return fail(CodeInvalidRegistry, "", fmt.Sprintf("the registry lists more than %d agents", MaxEntries))
}

// New builds a registry from spec: every entry's name checked, every flow
// read (or taken from opts.Flows) and checked with the engine's own
// validation (flow.Check), then for a usable contract. Every problem is
// returned at once, as Problems, each an *Error with its code.
func New(spec Spec, opts Options) (*Registry, error) {
	if len(spec.Agents) > MaxEntries {
		return nil, tooMany()
	}
	r := &Registry{agents: map[string]*Agent{}}
	var ps Problems
	for i, e := range spec.Agents {
		switch {
		case !flow.ValidAgentName(e.Name):
			ps = append(ps, fail(CodeInvalidRegistryEntry, clipName(e.Name), fmt.Sprintf("agents[%d]: %q is not an agent name (%s)", i, clipName(e.Name), flow.AgentNamePattern)))
			continue
		case r.agents[e.Name] != nil:
			ps = append(ps, fail(CodeDuplicateAgent, e.Name, fmt.Sprintf("agent %q is registered twice", e.Name)))
			continue
		case e.Flow == "":
			ps = append(ps, fail(CodeInvalidRegistryEntry, e.Name, fmt.Sprintf("agent %q names no flow", e.Name)))
			continue
		}
		a, err := r.read(e, opts)
		if err != nil {
			ps = append(ps, err)
			// Registered all the same, so a second entry of the name is
			// still a duplicate.
			r.agents[e.Name] = &Agent{Name: e.Name}
			continue
		}
		r.agents[e.Name] = a
		r.names = append(r.names, e.Name)
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return r, nil
}

// read reads and checks one entry's flow.
func (r *Registry) read(e Entry, opts Options) (*Agent, *Error) {
	a := &Agent{Name: e.Name}
	if f, ok := opts.Flows[e.Flow]; ok && f != nil {
		a.Flow = f
	} else {
		if !filepath.IsLocal(filepath.FromSlash(e.Flow)) {
			return nil, fail(CodeInvalidRegistryEntry, e.Name, fmt.Sprintf("agent %q: its flow %q must be a path inside the agent's folder", e.Name, e.Flow))
		}
		p := filepath.Join(opts.Dir, filepath.FromSlash(e.Flow))
		if !strings.HasSuffix(p, ".json") {
			p = filepath.Join(p, "flow.json")
		}
		f, err := flow.LoadFile(p)
		if err != nil {
			return nil, &Error{Code: CodeFlowUnreadable, Agent: e.Name, Message: fmt.Sprintf("agent %q: its flow %s cannot be read: %s", e.Name, e.Flow, strings.ReplaceAll(pathless(err).Error(), p, e.Flow)), Err: err}
		}
		a.Flow, a.Path = f, p
	}
	if err := flow.Check(a.Flow); err != nil {
		return nil, &Error{Code: CodeFlowInvalid, Agent: e.Name, Message: fmt.Sprintf("agent %q: its flow is invalid: %v", e.Name, err), Err: err}
	}
	if ps := ContractProblems(a.Flow); len(ps) > 0 {
		return nil, fail(CodeFlowInvalid, e.Name, fmt.Sprintf("agent %q cannot be delegated to: %s", e.Name, strings.Join(ps, "; ")))
	}
	a.Contract = ContractOf(a.Flow)
	a.Contract.Name = e.Name
	return a, nil
}

// Names lists the registered agents, in the order registered.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Agent returns the registered agent name. A name that is not an agent
// name is never looked up.
func (r *Registry) Agent(name string) (*Agent, bool) {
	if !flow.ValidAgentName(name) {
		return nil, false
	}
	r.lookups.Add(1)
	a := r.agents[name]
	if a == nil || a.Flow == nil {
		return nil, false
	}
	return a, true
}

// Contracts returns the contracts of the named agents that are
// registered, in the order given.
func (r *Registry) Contracts(names []string) []Contract {
	var cs []Contract
	for _, n := range names {
		if a, ok := r.Agent(n); ok {
			cs = append(cs, a.Contract)
		}
	}
	return cs
}

// clipName cuts a name as given to at most 64 bytes for a message.
func clipName(s string) string {
	if len(s) <= 64 {
		return s
	}
	cut := 64
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// CheckFlow reports every agent an agent node of f names that r does not
// register, as UNKNOWN_AGENT: what would be refused at run time, said
// before it runs. r nil registers nothing.
func CheckFlow(r *Registry, f *flow.Flow) []*Error {
	var ps []*Error
	for _, n := range f.Nodes {
		if n == nil || n.Type != flow.KindAgent {
			continue
		}
		names := n.Agents
		if n.Agent != "" {
			names = []string{n.Agent}
		}
		for _, name := range names {
			if !flow.ValidAgentName(name) {
				continue // the flow's own validation says so
			}
			if r == nil {
				ps = append(ps, fail(CodeUnknownAgent, name, fmt.Sprintf("node %q delegates to agent %q, and the folder has no %s", n.ID, name, FileName)))
				continue
			}
			if _, ok := r.Agent(name); !ok {
				ps = append(ps, fail(CodeUnknownAgent, name, fmt.Sprintf("node %q delegates to agent %q, which %s does not register", n.ID, name, FileName)))
			}
		}
	}
	return ps
}
