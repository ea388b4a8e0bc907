package flow

import "context"

// Model is what an llm node asks. The engine templates the prompt, asks,
// and (for a node with a schema) parses and checks the reply; a Model only
// talks to the provider. Implementations: package llm (a deterministic
// stand-in and an OpenAI-compatible client).
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (ModelReply, error)
}

// ModelRequest is one question to a model.
type ModelRequest struct {
	// Node is the llm node's id, for journals and logs.
	Node string
	// Agent is the registered agent (agents.json) whose flow the node is
	// in, when a delegation runs it; "" for the agent's own flow.
	Agent string
	// Prompt is the node's prompt with every {{channel}} filled in.
	Prompt string
	// Schema, when set, is the shape the reply must have: JSON text
	// matching it. A model that can be told (a provider's structured output,
	// the stand-in) should be; the engine checks the reply either way.
	Schema *Schema
	// JSONSchema, when set, is the reply's shape as a JSON Schema taken as
	// it is (an Agent Flow expect type's, which says what Schema cannot:
	// optional fields, bounds): a model that can be told sends it in place
	// of Schema. The caller checks the reply.
	JSONSchema map[string]any
	// Files are the files the prompt reads (each {{channel}} of a file
	// channel holding one), with their bytes, for a model that takes files.
	// Empty when the graph has no FileReader (BuildOptions.Files).
	Files []ModelFile
}

// ModelReply is a model's answer.
type ModelReply struct {
	// Text is the reply as the model wrote it; the engine trims it.
	Text string
	// Usage is nil when the provider did not report it.
	Usage *Usage
}

// Usage is the tokens one model call spent, as the provider reported them.
type Usage struct {
	InputTokens  int
	OutputTokens int
	// CachedTokens is how many of InputTokens the provider read from its
	// prompt cache; 0 when it did not say.
	CachedTokens int
	// TotalTokens is the provider's own total; 0 when it did not say, and
	// InputTokens + OutputTokens is then the total.
	TotalTokens int
}

// ToolCaller calls a tool by name ("<server>.<tool>" for an MCP tool, or a
// name in the flow's tools) with its arguments and returns its result.
// Tools are injected, never configured in the flow: package mcptools
// provides one for requires.mcp. Every call the engine makes goes through
// one gate (see Gate) before it reaches the ToolCaller.
type ToolCaller func(ctx context.Context, name string, args map[string]any) (any, error)
