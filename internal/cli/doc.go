// Package cli is the plumbing the two commands (cmd/board, cmd/agent)
// share, so that both speak one grammar: the --output writer (a table or
// JSON), exit codes and one-line errors, the version, the configuration
// binding (flag, then environment, then config file, then default) and the
// logger.
//
// A command is a cobra tree whose root comes from [NewRoot]; adding a
// subcommand is one root.AddCommand call. Its RunE prints data through an
// [Output] and logs through the [*slog.Logger] that [Logger] builds from
// the --log-format and --log-level flags.
package cli
