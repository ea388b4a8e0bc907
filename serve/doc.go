// Package serve serves an assembled agent (package agent) on loopback: a chat
// page and a small JSON API to start runs, answer the questions and approvals
// they stop for, and list the conversations the agent holds.
//
// Beside the server are the two records a served agent keeps in its folder:
// the journal (<dir>/.symphonix/journal.jsonl), one line per model call and
// tool call, without what was sent or returned unless it is opened with
// full detail; and the lock (<dir>/.symphonix/agent.lock), which keeps a
// folder to one served agent at a time.
//
// There is no authentication on the served agent yet: it binds loopback, and
// refuses requests that a web page on another origin could forge. The design
// is docs/serve.md.
package serve
