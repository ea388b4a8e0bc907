// Package packages is the solution package format: a gzip'd tar of an
// agent folder or a flow template, with a manifest listing every file by
// size and SHA-256, digested in canonical JSON and signed with Ed25519 in
// a DSSE envelope.
//
// The package surface reads, validates, digests and signs. It never
// deploys, runs, installs into a running agent or activates anything:
// Import and Instantiate only write a new folder, and a folder is inert
// until an operator serves it. Scan is the one reader of untrusted bytes:
// it streams, holds every limit of Limits, and refuses an unsafe or
// inconsistent archive with an *Error naming its Reason.
//
// The format is described in docs/packages.md.
package packages
