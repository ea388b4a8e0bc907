package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/flowtest"
	"github.com/symphonix/symphonix/internal/cli"
)

// testJSON is what agent test --output json prints: every file's
// problems and cases, then the counts. The field names are stable
// (docs/testing.md).
type testJSON struct {
	Dir     string                `json:"dir"`
	Files   []flowtest.FileResult `json:"files"`
	Passed  int                   `json:"passed"`
	Failed  int                   `json:"failed"`
	Invalid int                   `json:"files_with_problems"`
	OK      bool                  `json:"ok"`
}

// newTestCmd is `agent test DIR`: every *.test.json beside DIR/flow.json,
// each case run with the model and tools it mocks, each case ok or FAIL
// with why, then the counts; exit 1 on any failure or problem.
func newTestCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "test DIR",
		Short: "Run the test files beside DIR/flow.json (*.test.json) with mocked model and tools; exits 1 on any failure",
		Args:  cli.Args("DIR"),
	}
	var out cli.Output
	out.AddFlag(c.Flags())
	fs := c.Flags()
	pattern := fs.String("run", "", "run only the cases whose name matches this `REGEXP`")
	timeout := fs.Duration("timeout", flowtest.DefaultTimeout, "how long one case may run")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cfg := flowtest.Config{Timeout: *timeout, Getenv: a.getenv}
		if *timeout <= 0 {
			return cli.Usagef("--timeout: %s: want a duration above 0", *timeout)
		}
		if *pattern != "" {
			re, err := regexp.Compile(*pattern)
			if err != nil {
				return cli.Usagef("--run: %q is not a regular expression: %v", *pattern, err)
			}
			cfg.Run = re
		}
		rs, err := flowtest.Run(cmd.Context(), args[0], cfg)
		if err != nil {
			return reported(a.stderr, err)
		}
		s := flowtest.Summarize(rs)
		if out.JSON() {
			if err := cli.PrintJSON(a.stdout, testJSON{Dir: args[0], Files: rs, Passed: s.Passed, Failed: s.Failed, Invalid: s.Problems, OK: s.OK()}); err != nil {
				return err
			}
		} else {
			printTests(a, rs, s)
		}
		if !s.OK() {
			return cli.ErrReported
		}
		return nil
	}
	return c
}

// printTests prints, file by file, each problem and each case, then the
// summary line.
func printTests(a *app, rs []flowtest.FileResult, s flowtest.Summary) {
	w := a.stdout
	for _, r := range rs {
		fmt.Fprintf(w, "=== %s\n", r.File)
		for _, p := range r.Problems {
			fmt.Fprintf(w, "PROBLEM  %s\n", p)
		}
		for _, c := range r.Cases {
			took := (time.Duration(c.DurationMS) * time.Millisecond).String()
			if c.Passed {
				fmt.Fprintf(w, "ok    %s (%s)\n", c.Name, took)
			} else {
				fmt.Fprintf(w, "FAIL  %s (%s)\n", c.Name, took)
				for _, line := range c.Failure {
					fmt.Fprintf(w, "        %s\n", line)
				}
			}
			if !c.Unused.None() {
				var parts []string
				if len(c.Unused.LLM) > 0 {
					parts = append(parts, "llm "+strings.Join(c.Unused.LLM, ", "))
				}
				if len(c.Unused.Tools) > 0 {
					parts = append(parts, "tools "+strings.Join(c.Unused.Tools, ", "))
				}
				fmt.Fprintf(w, "        unused mocks: %s\n", strings.Join(parts, "; "))
			}
		}
	}
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Problems > 0 {
		line += fmt.Sprintf(", %d %s with problems", s.Problems, map[bool]string{true: "file", false: "files"}[s.Problems == 1])
	}
	fmt.Fprintln(w, line)
}
