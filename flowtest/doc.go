// Package flowtest runs a flow folder's test files (*.test.json beside
// flow.json): each case runs the real engine on the folder as package agent
// assembles it, with the model's replies and the tools' results taken from
// the case, and compares what the run did with what the case expects.
// Nothing reaches a network or a model: an llm node or a tool the case
// gives no answer for fails the case, naming it. docs/testing.md describes
// the file and the command that runs it, agent test.
package flowtest
