// Package llm holds the models an llm node asks: StandIn, a
// deterministic stand-in used when no provider key is set, and OpenAI, a
// client of any OpenAI-compatible chat-completions API. FromEnv picks one
// from the environment and says which.
//
// A model only talks to its provider. The engine templates the prompt,
// checks a structured reply against the node's schema, and retries: a
// model here never retries on its own, so a node's retry setting is the one
// place that says how often a failing call is tried again.
package llm
