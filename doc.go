// Package symphonix is the control plane for AI agents: the board that
// agents dial out to and operators work, and the agent's half of the link.
// See README.md and docs/.
//
// Generated code (api/ and the TypeScript SDK's sdk/typescript/src/gen/ from
// proto/ with buf, ent/ from ent/schema) is reproduced exactly by one
// command from the repository root; the TypeScript plugin is the one
// sdk/typescript/package-lock.json pins, installed by npm ci:
//
//	go generate ./...
package symphonix

//go:generate npx --yes @bufbuild/buf@1.75.0 lint
//go:generate npm ci --prefix sdk/typescript --ignore-scripts --no-audit --no-fund
//go:generate npx --yes @bufbuild/buf@1.75.0 generate
