// Package serve serves an assembled agent (package agent) on loopback: a chat
// page and a small JSON API to start runs, answer the questions and approvals
// they stop for, and list the conversations the agent holds.
//
// A served agent also keeps a journal of its model and tool calls (package
// journal: the server puts each run's thread on its context, for the
// journal's lines) and holds its folder's lock (package lock); package node
// assembles the three and links them to the board.
//
// There is no authentication on the served agent yet: it binds loopback, and
// refuses requests that a web page on another origin could forge. The design
// is docs/serve.md.
package serve
