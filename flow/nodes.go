package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// do runs a node once — its handler, or what its type does — and returns
// what it writes and the copies it sends. A panic is the node's failure.
func (r *run) do(ctx context.Context, t *task, v State) (writes []write, sends []send, err error) {
	defer func() {
		if p := recover(); p != nil {
			writes, sends, err = nil, nil, fmt.Errorf("panic: %v", p)
		}
	}()
	n := t.node
	switch n.Kind() {
	case KindHandler:
		u, err := n.handler(ctx, v)
		if err != nil {
			return nil, nil, err
		}
		ws, err := r.g.updates(u)
		return ws, nil, err
	case KindLLM:
		ws, err := r.g.llm(ctx, n, v)
		return ws, nil, err
	case KindTool:
		ws, err := r.g.tool(ctx, n, v)
		return ws, nil, err
	case KindTools:
		ws, err := r.g.runTools(ctx, n, v)
		return ws, nil, err
	case KindFanout:
		ss, err := fanout(n, v)
		return nil, ss, err
	case KindAsk:
		return []write{{channel: n.Output, value: t.answer}}, nil, nil
	case KindAgent:
		ws, err := r.delegate(ctx, t, v)
		return ws, nil, err
	}
	return nil, nil, fmt.Errorf("node kind %q does not run", n.Kind())
}

// llm asks the model the node's prompt, every {{channel}} filled in, and
// writes the reply, trimmed. With a schema the path is ask, parse, check,
// write — and an answer that does not fit is never written, not even the
// part of it that did. Without one, a reply for an object or list channel
// is read as JSON all the same, except that a list channel which appends
// takes a reply that is not a list as one item; and a reply for a string
// channel is the text as written, even when it reads as JSON.
func (g *Graph) llm(ctx context.Context, n *gnode, v State) ([]write, error) {
	prompt := render(n.Prompt, v)
	if n.Schema != nil {
		prompt += schemaWords(n.Schema)
	}
	files, err := g.modelFiles(ctx, n.Prompt, v)
	if err != nil {
		return nil, err
	}
	reply, err := g.model.Complete(ctx, ModelRequest{Node: n.ID, Prompt: prompt, Schema: n.Schema, Files: files})
	if err != nil {
		return nil, err
	}
	answer := strings.TrimSpace(reply.Text)
	var value any = answer
	switch {
	case n.Schema != nil:
		value = readJSON(answer, n.Schema.Type)
		if err := checkSchema(n.Schema, value, n.Output); err != nil {
			return nil, err
		}
	case n.output == ChannelList && n.appends:
		// Each copy of a fan-out appends its answer: a list is its items,
		// anything else — prose, most often — one item, as written.
		if l, ok := readJSON(answer, ChannelList).([]any); ok {
			value = l
		}
	case n.output == ChannelObject || n.output == ChannelList:
		value = readJSON(answer, n.output)
		if !isType(value, n.output) {
			return nil, &SchemaError{Problems: []string{fmt.Sprintf("%s must be %s, and it is %s", n.Output, typePhrase(n.output), describe(value))}}
		}
	}
	return []write{{channel: n.Output, value: value}}, nil
}

// tool calls the node's tool with its arguments filled in, and writes the
// result to output when it has one.
func (g *Graph) tool(ctx context.Context, n *gnode, v State) ([]write, error) {
	args, _ := renderArgs(n.args, v).(map[string]any)
	res, err := g.call(ctx, n.Tool, args)
	if err != nil {
		return nil, err
	}
	if n.Output == "" {
		return nil, nil
	}
	val, err := jsonValue(res)
	if err != nil {
		return nil, fmt.Errorf("tool %q returned a value that is %w", n.Tool, err)
	}
	if err := g.fitsString(n.Output, val); err != nil {
		return nil, fmt.Errorf("tool %q: %w", n.Tool, err)
	}
	return []write{{channel: n.Output, value: val}}, nil
}

// call is the one way the engine calls a tool: the gate first, then the
// tool.
func (g *Graph) call(ctx context.Context, name string, args map[string]any) (any, error) {
	if g.gate != nil {
		if err := g.gate(ctx, name, args); err != nil {
			return nil, fmt.Errorf("tool %q refused: %w", name, err)
		}
	}
	res, err := g.tools(ctx, name, args)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	return res, nil
}

// runTools runs the { name, args, id } calls queued in the node's calls
// channel, at the same time, and writes { id, name, result, error } for
// each, in the queue's order. One failing call does not stop the others:
// its error is in its own result, because what asked for the call is
// usually a model, and a model can only recover from what it is told. The
// queue is emptied by running it.
func (g *Graph) runTools(ctx context.Context, n *gnode, v State) ([]write, error) {
	calls, isList := v[n.Calls].([]any)
	if !isList && v[n.Calls] != nil {
		return nil, fmt.Errorf("channel %q holds %s, not a list of calls", n.Calls, KindOf(v[n.Calls]))
	}
	results := make([]any, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { results[i] = g.runCall(ctx, c) })
	}
	wg.Wait()
	return []write{
		{channel: n.Output, value: results},
		{channel: n.Calls, value: []any{}, reset: true},
	}, nil
}

func (g *Graph) runCall(ctx context.Context, c any) (result map[string]any) {
	m, _ := c.(map[string]any)
	name, _ := m["name"].(string)
	result = map[string]any{"id": m["id"], "name": m["name"], "result": nil, "error": nil}
	defer func() {
		if p := recover(); p != nil {
			result["result"], result["error"] = nil, fmt.Sprintf("panic: %v", p)
		}
	}()
	args, err := callArgs(m["args"])
	switch {
	case m == nil:
		result["error"] = "a call is an object: { name, args, id }, and this is " + KindOf(c)
		return result
	case name == "":
		result["error"] = "a call needs a name"
		return result
	case err != nil:
		result["error"] = err.Error()
		return result
	}
	res, err := g.call(ctx, name, args)
	if err != nil {
		result["error"] = err.Error()
		return result
	}
	val, err := jsonValue(res)
	if err != nil {
		result["error"] = fmt.Sprintf("tool %q returned a value that is %v", name, err)
		return result
	}
	result["result"] = val
	return result
}

// callArgs reads a queued call's arguments: an object, the JSON text of
// one (as some models give them), or nothing.
func callArgs(a any) (map[string]any, error) {
	switch a := a.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return clone(a).(map[string]any), nil
	case string:
		var m map[string]any
		if err := json.Unmarshal([]byte(a), &m); err == nil && m != nil {
			return m, nil
		}
	}
	return nil, fmt.Errorf("a call's args are an object, and these are %s", KindOf(a))
}

// fanout sends one copy of the node's target per item of its list, each
// with its item. An empty list sends nothing, and a branch that sends
// nothing ends.
func fanout(n *gnode, v State) ([]send, error) {
	var items []any
	switch l := v[n.Over].(type) {
	case nil:
	case []any:
		items = l
	default:
		return nil, fmt.Errorf("fanout over %q: it holds %s, not a list", n.Over, KindOf(l))
	}
	sends := make([]send, len(items))
	for i, it := range items {
		sends[i] = send{node: n.To, as: n.As, item: clone(it)}
	}
	return sends, nil
}

// fitsString refuses a list or an object written to a string channel: a
// string channel never silently holds one. Other types are not checked
// here; a channel's type is what its readers are told to expect.
func (g *Graph) fitsString(ch string, v any) error {
	if g.types[ch] != ChannelString {
		return nil
	}
	switch v.(type) {
	case []any, map[string]any:
		return fmt.Errorf("wrote %s to channel %q, which is a string", KindOf(v), ch)
	}
	return nil
}
