// Package symphonix is the control plane for AI agents: the board that
// agents dial out to and operators work, and the agent's half of the link.
// See README.md and docs/.
//
// Generated code (api/ and the TypeScript SDK's sdk/typescript/src/gen/ from
// proto/ with buf, ent/ from ent/schema), the web board's vendored charting
// library (ui/static/vendor/, from npm at a pinned version and integrity)
// and the API reference (docs/api.md,
// from proto/ and the board's policy table) are reproduced exactly by one
// command from the repository root; the TypeScript plugin is the one
// sdk/typescript/package-lock.json pins, installed by npm ci:
//
//	go generate ./...
//
// docs/api.md is written last, by the go:generate line of internal/apidoc,
// once api/ and ent/ are fresh: it compiles the board.
//
// The same command checks that proto/ is still API v1: buf breaking
// compares it, with the FILE rules of buf.yaml, against proto/v1.binpb, the
// image of v1 as it was released (docs/compatibility.md). That image is
// never made again for v1; it was made once, on purpose, with
//
//	npx --yes @bufbuild/buf@1.75.0 build -o proto/v1.binpb
package symphonix

//go:generate npx --yes @bufbuild/buf@1.75.0 lint
//go:generate npx --yes @bufbuild/buf@1.75.0 breaking --against proto/v1.binpb
//go:generate npm ci --prefix sdk/typescript --ignore-scripts --no-audit --no-fund
//go:generate npx --yes @bufbuild/buf@1.75.0 generate
