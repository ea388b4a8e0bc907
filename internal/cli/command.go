package cli

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Root is a command's root: a cobra command set to speak the house
// grammar, with the flags every command has (--config, --log-format,
// --log-level, --version) and a version subcommand. Subcommands are added
// with Command.AddCommand.
type Root struct {
	*cobra.Command
	Log    *LogFlags
	Config *Binder
	once   sync.Once
}

// NewRoot makes the root command name. getenv is how the environment is
// read (os.Getenv, or a test's map); help and data go to stdout, nothing
// else does.
func NewRoot(name, short string, getenv func(string) string, stdout, stderr io.Writer) *Root {
	c := &cobra.Command{
		Use:           name,
		Short:         short,
		SilenceErrors: true, // errors are printed once, by Report
		SilenceUsage:  true, // never a usage dump on a runtime error
		Version:       Version().String(),
		Args:          NoArgs,
	}
	c.SetOut(stdout)
	c.SetErr(stderr)
	c.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	c.SetFlagErrorFunc(flagError)
	c.CompletionOptions.HiddenDefaultCmd = false
	r := &Root{Command: c, Log: &LogFlags{}, Config: NewBinder(getenv)}
	r.Log.AddFlags(c.PersistentFlags())
	r.Config.AddFlag(c.PersistentFlags())
	c.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		return r.Config.Bind(cmd)
	}
	c.AddCommand(newVersionCmd(c.Name()))
	return r
}

// Run runs the command line args (without the program's name) under
// ctx and returns what the command returned: see ExitCode and Report.
func (r *Root) Run(ctx context.Context, args []string) error {
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	r.SetArgs(args)
	r.once.Do(func() {
		r.InitDefaultCompletionCmd() // cobra would add it in Execute, after this
		envInHelp(r.Command)
	})
	_, err := r.ExecuteContextC(ctx)
	return unknownCommand(err)
}

// unknownCommand turns cobra's own "unknown command" error into a
// *UsageError.
func unknownCommand(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "unknown command ") {
		return &UsageError{Err: err}
	}
	return err
}

// Group makes a command that only holds subcommands: run alone, or with
// an unknown subcommand, it is a usage error that names the ones it has.
func Group(use, short string) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		if len(args) > 0 {
			return Usagef("%s: unknown command %q: want %s (see %s --help)", under(cmd), args[0], orList(names), cmd.CommandPath())
		}
		return Usagef("%s: want a command: %s (see %s --help)", under(cmd), orList(names), cmd.CommandPath())
	}
	return c
}

// NoArgs refuses any positional argument, as a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasAvailableSubCommands() {
			return Usagef("unknown command %q (see %s --help)", args[0], cmd.CommandPath())
		}
		return Usagef("unexpected argument %q (see %s --help)", args[0], cmd.CommandPath())
	}
	return nil
}

// Args wants exactly the positional arguments names, in this order.
func Args(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return Usagef("%s: want %s (see %s --help)", under(cmd), strings.Join(names[len(args):], " "), cmd.CommandPath())
		case len(args) > len(names):
			return Usagef("%s: unexpected argument %q (see %s --help)", under(cmd), args[len(names)], cmd.CommandPath())
		}
		return nil
	}
}

// MaxArgs wants at most the positional arguments names.
func MaxArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > len(names) {
			return Usagef("%s: unexpected argument %q (see %s --help)", under(cmd), args[len(names)], cmd.CommandPath())
		}
		return nil
	}
}

// under is cmd's path without the root's name, which Report prints
// first: "token revoke" for board token revoke.
func under(cmd *cobra.Command) string {
	p := cmd.CommandPath()
	if _, rest, ok := strings.Cut(p, " "); ok {
		return rest
	}
	return p
}

// envInHelp ends every flag's help with its environment variable, on
// every command under c.
func envInHelp(c *cobra.Command) {
	add := func(f *pflag.Flag) {
		if slices.Contains(skipped, f.Name) || strings.Contains(f.Usage, "(env ") {
			return
		}
		f.Usage += " (env " + EnvName(f) + ")"
	}
	c.LocalNonPersistentFlags().VisitAll(add)
	c.PersistentFlags().VisitAll(add)
	for _, s := range c.Commands() {
		envInHelp(s)
	}
}
