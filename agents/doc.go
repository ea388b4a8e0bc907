// Package agents is delegation between agents: a registry of the agents a
// flow may hand work to, by name; each one's contract (what it is for,
// what it takes, what it gives back) read from its own flow; and Invoke,
// which runs one of them as a child of a run, holding the call to the
// contract on the way in and on the way out. A Delegator is the engine's
// flow.Delegate: an agent node's call arrives there, and a model's choice
// of agent is read and checked there.
//
// Every refusal is an *Error carrying one of Codes. Names are matched
// against flow.AgentNamePattern before any lookup, and lookups are map
// lookups, so nothing a model writes becomes a path.
//
// The design is docs/delegation.md.
package agents
