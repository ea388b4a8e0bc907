package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"
)

// Logger is the one logger a command uses: format text or json, level
// debug, info, warn or error, written to w.
func Logger(format, level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q: want debug, info, warn or error", level)
	}
	o := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("--log-format: %q: want text or json", format)
}

// LogFlags are --log-format and --log-level, which every command has.
type LogFlags struct {
	format, level *string
}

// AddFlags registers --log-format and --log-level on fs.
func (l *LogFlags) AddFlags(fs *pflag.FlagSet) {
	l.format = Choice(fs, "log-format", "text", "how log lines are written: text or json", "text", "json")
	l.level = Choice(fs, "log-level", "", "the least a line must be to be logged: debug, info, warn or error (default info; warn for agent run and agent cancel, which talk at a terminal)", "debug", "info", "warn", "error")
}

// Logger is the logger the flags ask for, writing to w; def is the level
// when --log-level was not given.
func (l *LogFlags) Logger(w io.Writer, def slog.Level) *slog.Logger {
	level := *l.level
	if level == "" {
		level = def.String()
	}
	log, err := Logger(*l.format, level, w)
	if err != nil {
		// The flags take only what Logger takes; this is flags never added.
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: def}))
	}
	return log
}
