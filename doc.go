// Package symphonix is the control plane for AI agents: the board that
// agents dial out to and operators work, and the agent's half of the link.
// See README.md and docs/.
//
// Generated code (api/ from proto/ with buf, ent/ from ent/schema) is
// reproduced exactly by one command from the repository root:
//
//	go generate ./...
package symphonix

//go:generate npx --yes @bufbuild/buf@1.75.0 lint
//go:generate npx --yes @bufbuild/buf@1.75.0 generate
