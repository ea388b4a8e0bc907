// Package evals runs a flow folder's evals: the suites beside its
// flow.json (*.eval.json) run the flow for real — the environment's model,
// the real MCP servers but for the tools a case mocks — once per case, and
// a judge model scores each answer against the suite's criteria. An eval
// is neither free nor repeatable, so a run of a suite on disk is kept in
// the folder and runs are compared by the build they scored
// (ScoresByBuild). docs/evals.md is the user's guide.
package evals
