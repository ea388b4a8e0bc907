package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/internal/cli"
)

// afArgs wants every argument to name a .af file.
func afArgs(args []string) error {
	for _, p := range args {
		if !isAF(p) {
			return cli.Usagef("%s: want a .af file", p)
		}
	}
	return nil
}

func isAF(path string) bool { return strings.HasSuffix(path, ".af") }

// readAF reads an Agent Flow file, no more than the parser reads (past
// that it says the file is too large).
func readAF(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, agentflow.MaxSourceBytes+1))
}

// printDiagnostics prints each as a compiler does:
// FILE:LINE:COL: SEVERITY: CODE: MESSAGE.
func printDiagnostics(w io.Writer, path string, diags []agentflow.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintf(w, "%s:%s\n", path, d)
	}
}

// diagnosticJSON is one diagnostic in agent check FILE.af -o json.
type diagnosticJSON struct {
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
	Severity  string `json:"severity"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// checkAFJSON is agent check FILE.af's -o json.
type checkAFJSON struct {
	File        string           `json:"file"`
	OK          bool             `json:"ok"`
	Diagnostics []diagnosticJSON `json:"diagnostics"`
}

// checkAF is agent check FILE.af: the file's diagnostics, one a line as
// a compiler prints them, nothing when there are none; exit 1 on an error
// (warnings and info alone exit 0). A file that parses is checked; one
// with lex or syntax errors reports those alone, since the checker would
// report what its partial tree lacks.
func checkAF(a *app, out *cli.Output, path string) error {
	src, err := readAF(path)
	if err != nil {
		return err
	}
	f, diags := agentflow.Parse(src)
	if !agentflow.HasErrors(diags) {
		diags = append(diags, agentflow.CheckFile(f)...)
	}
	ok := !agentflow.HasErrors(diags)
	if out.JSON() {
		v := checkAFJSON{File: path, OK: ok, Diagnostics: []diagnosticJSON{}}
		for _, d := range diags {
			v.Diagnostics = append(v.Diagnostics, diagnosticJSON{Line: d.Pos.Line, Column: d.Pos.Column, EndLine: d.End.Line, EndColumn: d.End.Column, Severity: d.Severity.String(), Code: d.Code, Message: d.Message})
		}
		if err := cli.PrintJSON(a.stdout, v); err != nil {
			return err
		}
	} else {
		printDiagnostics(a.stdout, path, diags)
	}
	if !ok {
		return cli.ErrReported
	}
	return nil
}
