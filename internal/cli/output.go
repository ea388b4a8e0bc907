package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// Output is the --output flag of a command that prints data, and the
// writer that prints it: a table for people (the default) or JSON for
// programs. The zero value prints tables.
type Output struct {
	format choice
}

// Output formats.
const (
	FormatTable = "table"
	FormatJSON  = "json"
)

// AddFlag registers --output (-o) table|json on fs.
func (o *Output) AddFlag(fs *pflag.FlagSet) {
	o.format = newChoice(FormatTable, FormatTable, FormatJSON)
	fs.VarP(&o.format, "output", "o", "how to print: table or json")
}

// JSON reports whether --output json was asked for.
func (o *Output) JSON() bool { return o.format.value == FormatJSON }

// Table is what a command prints as a table: a header, then rows of as
// many cells. An empty cell prints as "-".
type Table struct {
	Header []string
	Rows   [][]string
}

// Append adds a row.
func (t *Table) Append(cells ...string) { t.Rows = append(t.Rows, cells) }

// Print writes t as a table to w, or v as indented JSON when --output json
// was given. v should have snake_case JSON field names that stay stable;
// a nil slice prints as [], not null.
func (o *Output) Print(w io.Writer, t Table, v any) error {
	if o.JSON() {
		return PrintJSON(w, v)
	}
	return PrintTable(w, t)
}

// PrintJSON writes v as indented JSON and a newline.
func PrintJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if string(b) == "null" {
		b = []byte("[]")
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// PrintTable writes t in aligned columns, two spaces apart.
func PrintTable(w io.Writer, t Table) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(t.Header) > 0 {
		fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	}
	for _, r := range t.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			// A tab or newline in a cell would break the columns.
			c = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c)
			if c == "" {
				c = "-"
			}
			cells[i] = c
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
