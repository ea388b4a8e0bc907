// Package flow is the flow engine's model of a flow file: the JSON DSL the
// seeds call LGFlow, loaded into Go types and checked before anything runs.
//
// Load parses a flow (duplicate keys are an error, nothing else is);
// Validate reports every problem with it at once, each with a stable code,
// a message a person can act on and the path of the thing at fault. The DSL
// is versioned: Versions lists what this build accepts, and Features says
// which version introduced each part of the language, so that a feature
// used below its version is refused by name rather than silently ignored.
//
// Running a flow is not here yet. What the later build step must refuse
// itself (a flow that waits for a person, built without a checkpointer) is
// here as ErrApprovalNeedsCheckpointer and ErrAskNeedsCheckpointer, with
// CheckpointerRequired to ask a flow whether it needs one.
//
// The design notes, the feature table and the problem codes are in
// docs/flow.md.
package flow
