package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EnvPrefix starts the environment variable of every flag: --run-days is
// SYMPHONIX_RUN_DAYS, unless the flag was given another name with Env.
const EnvPrefix = "SYMPHONIX_"

// ConfigEnv names the config file when --config is not given.
const ConfigEnv = EnvPrefix + "CONFIG"

// MaxConfigBytes is the largest config file read.
const MaxConfigBytes = 1 << 20

// Annotations on a flag (pflag.Flag.Annotations).
const (
	annEnv    = "symphonix_env"    // the flag's environment variable, when not EnvPrefix + its name
	annSecret = "symphonix_secret" // "secret": never printed; "dsn": printed without its password
)

// Env gives flag name of fs the environment variable env instead of
// EnvPrefix + NAME.
func Env(fs *pflag.FlagSet, name, env string) {
	must(fs.SetAnnotation(name, annEnv, []string{env}))
}

// Secret marks flag name of fs a secret: board config and the like print
// *** for it.
func Secret(fs *pflag.FlagSet, name string) {
	must(fs.SetAnnotation(name, annSecret, []string{"secret"}))
}

// DSN marks flag name of fs a data source name: printed with the password
// of a URL replaced by ***.
func DSN(fs *pflag.FlagSet, name string) {
	must(fs.SetAnnotation(name, annSecret, []string{"dsn"}))
}

func must(err error) {
	if err != nil {
		panic(err) // a flag name misspelt in the program, found by any test
	}
}

// EnvName is the environment variable of flag f.
func EnvName(f *pflag.Flag) string {
	if e := f.Annotations[annEnv]; len(e) == 1 {
		return e[0]
	}
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// Where a setting came from, strongest first.
const (
	FromFlag    = "flag"
	FromEnv     = "env"
	FromFile    = "file"
	FromDefault = "default"
)

// Setting is one flag's effective value and where it came from, as board
// config prints it.
type Setting struct {
	Key    string `json:"key"`
	Value  any    `json:"value"` // a string, or a list of strings; secrets redacted
	Source string `json:"source"`
	Env    string `json:"env"`
}

// Binder gives every flag that was not on the command line its value from
// the environment, else from the config file, else its default: flag >
// env > file > default.
type Binder struct {
	getenv   func(string) string
	config   string
	settings []Setting
	file     string
}

// NewBinder reads the environment through getenv.
func NewBinder(getenv func(string) string) *Binder {
	return &Binder{getenv: getenv}
}

// AddFlag registers --config on fs.
func (b *Binder) AddFlag(fs *pflag.FlagSet) {
	fs.StringVar(&b.config, "config", "", "a TOML config file whose keys are flag names (env "+ConfigEnv+")")
}

// File is the config file read, or "".
func (b *Binder) File() string { return b.file }

// Settings are the flags of the command that ran, with their effective
// values and where each came from, secrets redacted, in name order.
func (b *Binder) Settings() []Setting { return b.settings }

// Source is where flag name of the command that ran got its value:
// FromFlag, FromEnv, FromFile or FromDefault ("" for no such flag).
func (b *Binder) Source(name string) string {
	for _, s := range b.settings {
		if s.Key == name {
			return s.Source
		}
	}
	return ""
}

// skipped are flags that are not configuration.
var skipped = []string{"help", "version", "config"}

// Bind sets each flag of cmd not given on the command line from the
// environment or the config file. Errors are *UsageError and name the
// variable, or the file, line and key.
func (b *Binder) Bind(cmd *cobra.Command) error {
	fs := cmd.Flags()
	path, pathSource := b.config, FromFlag
	if !fs.Changed("config") {
		path, pathSource = b.getenv(ConfigEnv), FromEnv
	}
	fileErr := func(err error) error {
		if pathSource == FromEnv {
			return Usagef("%s: %w", ConfigEnv, err)
		}
		return Usagef("--config: %w", err)
	}
	var file map[string]fileValue
	if path != "" {
		var err error
		if file, err = loadConfig(path, cmd); err != nil {
			return fileErr(err)
		}
		b.file = path
	}
	b.settings = nil
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || slices.Contains(skipped, f.Name) {
			return
		}
		env := EnvName(f)
		source := FromDefault
		switch {
		case f.Changed:
			source = FromFlag
		case b.getenv(env) != "":
			source = FromEnv
			v := b.getenv(env)
			var vals []string
			if isList(f) {
				vals = strings.Split(v, ",")
			} else {
				vals = []string{v}
			}
			if e := setFlag(f, vals); e != nil {
				err = Usagef("%s: %v", env, e)
				return
			}
		default:
			fv, ok := file[f.Name]
			if !ok {
				break
			}
			source = FromFile
			if e := setFlag(f, fv.vals); e != nil {
				err = fileErr(fmt.Errorf("%s:%d: %s: %w", path, fv.line, f.Name, e))
				return
			}
		}
		b.settings = append(b.settings, Setting{Key: f.Name, Value: shown(f), Source: source, Env: env})
	})
	return err
}

// setFlag sets f to vals: the whole list for a list flag, else vals[0].
// The flag counts as changed only when set on the command line.
func setFlag(f *pflag.Flag, vals []string) error {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return flagValueError(f, vals, sv.Replace(vals))
	}
	for _, v := range vals {
		if err := f.Value.Set(v); err != nil {
			return flagValueError(f, []string{v}, err)
		}
	}
	return nil
}

// flagValueError says what is wrong with value the way flagError does.
func flagValueError(f *pflag.Flag, vals []string, err error) error {
	if err == nil {
		return nil
	}
	if want, ok := typeWords[f.Value.Type()]; ok && len(vals) == 1 {
		return fmt.Errorf("%q is not %s", vals[0], want)
	}
	return err
}

func isList(f *pflag.Flag) bool {
	_, ok := f.Value.(pflag.SliceValue)
	return ok
}

// shown is f's value as board config prints it, secrets redacted.
func shown(f *pflag.Flag) any {
	kind := ""
	if a := f.Annotations[annSecret]; len(a) == 1 {
		kind = a[0]
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		vals := sv.GetSlice()
		if vals == nil {
			vals = []string{}
		}
		if kind == "secret" {
			redacted := make([]string, len(vals))
			for i := range vals {
				redacted[i] = "***"
			}
			return redacted
		}
		return vals
	}
	v := f.Value.String()
	switch {
	case kind == "secret" && v != "":
		return "***"
	case kind == "dsn":
		return RedactDSN(v)
	}
	return v
}

// RedactDSN is dsn with the password of a URL, and any password=
// parameter, replaced by ***.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		if strings.Contains(strings.ToLower(dsn), "password") {
			return "***"
		}
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Set(k, "xxxxx")
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return strings.ReplaceAll(u.String(), "xxxxx", "***")
}

// fileValue is a key's value in the config file, as flag text, and the
// line it is on.
type fileValue struct {
	vals []string
	line int
}

// loadConfig reads path for cmd: top-level keys, then the keys of the
// table named for cmd's path under its root ([serve], [token.operator]),
// which win. A key that is no flag of any command, a table that is no
// command, and a value of the wrong type are errors naming the file, line
// and key.
func loadConfig(path string, cmd *cobra.Command) (map[string]fileValue, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxConfigBytes)
	}
	var top map[string]toml.Primitive
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s", path, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := configPath(cmd)
	out := make(map[string]fileValue)
	var walk func(c *cobra.Command, table map[string]toml.Primitive, key toml.Key, depth int) error
	walk = func(c *cobra.Command, table map[string]toml.Primitive, key toml.Key, depth int) error {
		names := make([]string, 0, len(table))
		for k := range table {
			names = append(names, k)
		}
		slices.Sort(names) // errors in a stable order
		var tables []string
		for _, k := range names {
			full := append(slices.Clone(key), k)
			var p probe
			line := lineOf(md.PrimitiveDecode(table[k], &p))
			if _, ok := p.v.(map[string]any); ok {
				tables = append(tables, k)
				continue
			}
			f := flagIn(c, k)
			if f == nil {
				return fmt.Errorf("%s:%d: %s: unknown key: keys are the flags of %s and its commands, without --", path, line, full, c.CommandPath())
			}
			vals, err := flagText(f, p.v)
			if err != nil {
				return fmt.Errorf("%s:%d: %s: %v", path, line, full, err)
			}
			// Only the keys on the way to cmd apply to it.
			if depth <= len(want) && slices.Equal(key, want[:depth]) {
				if cf := cmd.Flags().Lookup(k); cf != nil {
					out[k] = fileValue{vals: vals, line: line}
				}
			}
		}
		for _, k := range tables {
			full := append(slices.Clone(key), k)
			sub := subcommand(c, k)
			if sub == nil {
				line := lineOf(md.PrimitiveDecode(table[k], &probe{}))
				return fmt.Errorf("%s:%d: [%s]: no such command: a table is named for a command (%s)", path, line, full, strings.Join(commandNames(c), ", "))
			}
			var inner map[string]toml.Primitive
			if err := md.PrimitiveDecode(table[k], &inner); err != nil {
				return fmt.Errorf("%s: [%s]: %v", path, full, err)
			}
			if err := walk(sub, inner, full, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(cmd.Root(), top, nil, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// configPath is the names of cmd's path under its root: [] for the root,
// [token operator] for board token operator. A command that stands for
// another names its table with Annotations[ConfigTable]: board, which
// serves, and board config, which shows what board serve would use, read
// [serve].
func configPath(cmd *cobra.Command) []string {
	if t := cmd.Annotations[ConfigTable]; t != "" {
		return strings.Fields(t)
	}
	var names []string
	for c := cmd; c.HasParent(); c = c.Parent() {
		names = append([]string{c.Name()}, names...)
	}
	return names
}

// ConfigTable is the annotation of a command whose config file table is
// another command's: its path under the root, space-separated ("serve").
const ConfigTable = "config_table"

// probe takes a key's value from the decoder; its error makes the
// decoder say the key's line.
type probe struct{ v any }

var errProbe = errors.New("probe")

func (p *probe) UnmarshalTOML(v any) error {
	p.v = v
	return errProbe
}

func lineOf(err error) int {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

// flagIn is the flag name of c or of any command under it.
func flagIn(c *cobra.Command, name string) *pflag.Flag {
	if slices.Contains(skipped, name) {
		return nil
	}
	if f := c.Flags().Lookup(name); f != nil {
		return f
	}
	if f := c.PersistentFlags().Lookup(name); f != nil {
		return f
	}
	for _, s := range c.Commands() {
		if f := flagIn(s, name); f != nil {
			return f
		}
	}
	return nil
}

func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

func commandNames(c *cobra.Command) []string {
	var names []string
	for _, s := range c.Commands() {
		names = append(names, s.Name())
	}
	return names
}

// flagText is a TOML value as the text flag f takes, or why it is the
// wrong type.
func flagText(f *pflag.Flag, v any) ([]string, error) {
	if isList(f) {
		switch v := v.(type) {
		case string:
			return []string{v}, nil
		case []any:
			out := make([]string, 0, len(v))
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("want a list of strings, not a list holding %s", tomlType(e))
				}
				out = append(out, s)
			}
			return out, nil
		}
		return nil, fmt.Errorf("want a list of strings, not %s", tomlType(v))
	}
	switch f.Value.Type() {
	case "bool":
		if b, ok := v.(bool); ok {
			return []string{fmt.Sprint(b)}, nil
		}
		return nil, fmt.Errorf("want true or false, not %s", tomlType(v))
	case "int", "int64", "uint", "int32":
		if i, ok := v.(int64); ok {
			return []string{fmt.Sprint(i)}, nil
		}
		return nil, fmt.Errorf("want a whole number, not %s", tomlType(v))
	case "float64", "float32":
		switch n := v.(type) {
		case int64:
			return []string{fmt.Sprint(n)}, nil
		case float64:
			return []string{fmt.Sprint(n)}, nil
		}
		return nil, fmt.Errorf("want a number, not %s", tomlType(v))
	}
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	return nil, fmt.Errorf("want a string, not %s", tomlType(v))
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "a whole number"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case []any, []map[string]any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}
