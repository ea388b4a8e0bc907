// Package flow is the flow engine: the JSON DSL of the flow language
// (LGFlow in the platform's reference), loaded into Go types, checked
// before anything runs, and run.
//
// Load parses a flow (duplicate keys are an error, nothing else is);
// Validate reports every problem with it at once, each with a stable code,
// a message a person can act on and the path of the thing at fault. The DSL
// is versioned: Versions lists what this build accepts, and Features says
// which version introduced each part of the language, so that a feature
// used below its version is refused by name rather than silently ignored.
//
// Build turns a valid flow into a Graph, resolving its handlers, routers
// and reducers from a Registry and refusing what cannot run (a name not
// registered, an llm node with no Model, a tool node with no ToolCaller, a
// flow that waits for a person with no Checkpointer). A Graph runs the way
// LangGraph does: in steps, every node a step triggers running at the same
// time, their writes merged through each channel's reducer when the step
// ends. Invoke starts a run on a thread; a run that stops for a person (an
// ask node, an approval) is kept in the Checkpointer and Resume answers
// it, from any Graph built from the same flow. Every tool call goes
// through one Gate. An agent node hands work to another agent through
// BuildOptions.Delegate (package agents implements it); a child that stops
// for a person stops its parent, and answering the parent answers it.
//
// The design notes, the feature table and the problem codes are in
// docs/flow.md.
package flow
