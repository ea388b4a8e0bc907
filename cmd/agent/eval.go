package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/evals"
	"github.com/symphonix/symphonix/internal/cli"
)

// evalJSON is what agent eval --output json prints: each suite's run (or
// preview, or problems), then whether all passed. The field names are
// stable (docs/evals.md).
type evalJSON struct {
	Dir    string          `json:"dir"`
	Suites []evalSuiteJSON `json:"suites"`
	OK     bool            `json:"ok"`
}

type evalSuiteJSON struct {
	File      string               `json:"file"`
	Problems  []evals.Problem      `json:"problems,omitempty"`
	Preview   *evals.PreviewResult `json:"preview,omitempty"`
	Run       *evals.Result        `json:"run,omitempty"`
	Published *bool                `json:"published,omitempty"`
	Notes     []string             `json:"notes,omitempty"`
}

// publishTimeout bounds one PublishEvalScores call.
const publishTimeout = 30 * time.Second

// newEvalCmd is `agent eval DIR`: every *.eval.json beside DIR/flow.json
// run for real and judged (or, with --preview, what a run would do);
// exit 1 unless every suite passed.
func newEvalCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "eval DIR",
		Short: "Run the eval suites beside DIR/flow.json (*.eval.json) with the real model and score each answer with a judge model; exits 1 unless every suite passed",
		Args:  cli.Args("DIR"),
	}
	var out cli.Output
	out.AddFlag(c.Flags())
	fs := c.Flags()
	preview := fs.Bool("preview", false, "say what a run would do — cases, calls, the judge's prompt sizes — without a model, a key or a cost")
	pattern := fs.String("run", "", "run only the cases whose name matches this `REGEXP`")
	timeout := fs.Duration("timeout", evals.DefaultTimeout, "how long one case may run")
	publish := fs.String("publish", "", "after the run, send each suite's scores to the board at this `URL` (an agent token from SYMPHONIX_TOKEN, MONITOR_TOKEN or --token-file)")
	tokenFile := fs.String("token-file", "", "a file holding the agent token for --publish, readable by its owner alone (chmod 600)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		dir := args[0]
		if *timeout <= 0 {
			return cli.Usagef("--timeout: %s: want a duration above 0", *timeout)
		}
		var filter *regexp.Regexp
		if *pattern != "" {
			re, err := regexp.Compile(*pattern)
			if err != nil {
				return cli.Usagef("--run: %q is not a regular expression: %v", *pattern, err)
			}
			filter = re
		}
		var pub *publisher
		if *publish != "" {
			if *preview {
				return cli.Usagef("--publish: a preview scores nothing to publish")
			}
			var err error
			if pub, err = newPublisher(*publish, a.getenv, *tokenFile); err != nil {
				return err
			}
		} else if *tokenFile != "" {
			return cli.Usagef("--token-file: only with --publish")
		}
		paths, err := evals.Suites(dir)
		if err != nil {
			return err
		}
		if len(paths) == 0 {
			fmt.Fprintf(a.stderr, "%s: no *%s beside flow.json\n", dir, evals.Suffix)
			return cli.ErrReported
		}
		res := evalJSON{Dir: dir, Suites: []evalSuiteJSON{}, OK: true}
		for _, p := range paths {
			s := evalSuiteJSON{File: filepath.Base(p)}
			if *preview {
				s.Preview, err = evals.Preview(cmd.Context(), dir, p, filter)
			} else {
				if len(res.Suites) == 0 && standInJudge(a.getenv) {
					// Said before the run, which may take a while.
					fmt.Fprintln(a.stderr, standInLine)
				}
				s.Run, err = evals.Run(cmd.Context(), dir, p, evals.Config{Getenv: a.getenv, Timeout: *timeout, Run: filter, Journal: true})
			}
			var fe *evals.EvalFileError
			switch {
			case errors.As(err, &fe):
				s.Problems = fe.Problems
			case err != nil:
				return reported(a.stderr, err)
			}
			ok := len(s.Problems) == 0 && (s.Run == nil || s.Run.Passed)
			if s.Run != nil && pub != nil {
				published, note := pub.publish(cmd.Context(), s.Run)
				s.Published = &published
				if note != "" {
					s.Notes = append(s.Notes, note)
				}
				ok = ok && published
			}
			res.OK = res.OK && ok
			res.Suites = append(res.Suites, s)
		}
		if out.JSON() {
			if err := cli.PrintJSON(a.stdout, res); err != nil {
				return err
			}
		} else {
			printEvals(a.stdout, res)
		}
		if !res.OK {
			return cli.ErrReported
		}
		return nil
	}
	return c
}

// standInLine is said of a run the stand-in judges.
const standInLine = "judge: stand-in (no JUDGE_API_KEY or OPENAI_API_KEY): its scores say nothing"

// standInJudge reports whether the environment gives the judge no key.
func standInJudge(getenv func(string) string) bool {
	return strings.TrimSpace(getenv("JUDGE_API_KEY")) == "" && strings.TrimSpace(getenv("OPENAI_API_KEY")) == ""
}

// printEvals prints each suite: its problems, its preview or its cases,
// its summary line, build and record.
func printEvals(w io.Writer, res evalJSON) {
	for _, s := range res.Suites {
		fmt.Fprintf(w, "=== %s\n", s.File)
		for _, p := range s.Problems {
			fmt.Fprintf(w, "PROBLEM  %s\n", p)
		}
		if p := s.Preview; p != nil {
			for _, c := range p.Evals {
				fmt.Fprintf(w, "case  %s (%s, judge prompt %d chars before the answer)\n", c.Name, c.Source, c.JudgeChars)
			}
			fmt.Fprintf(w, "%d cases: %d runs of the flow, at least %d judge calls; judge prompts %d chars, about %d input tokens (chars/4) before the answers\n",
				p.Total, p.Calls.Runs, p.Calls.Judge, p.Judge.Chars, p.Judge.EstimatedInputTokens)
			fmt.Fprintf(w, "build %s\n", p.Build)
		}
		if r := s.Run; r != nil {
			printRun(w, r)
		}
		for _, n := range s.Notes {
			fmt.Fprintln(w, n)
		}
	}
}

func printRun(w io.Writer, r *evals.Result) {
	for _, c := range r.Evals {
		took := (time.Duration(c.Metrics.LatencyMS) * time.Millisecond).String()
		switch c.Status {
		case evals.StatusScored:
			var parts []string
			lowest, low := "", 2.0
			for _, k := range slices.Sorted(maps.Keys(c.Criteria)) {
				parts = append(parts, fmt.Sprintf("%s %.2f", k, c.Criteria[k].Score))
				if c.Criteria[k].Score < low {
					lowest, low = k, c.Criteria[k].Score
				}
			}
			fmt.Fprintf(w, "%-11s %.2f  %s (%s) [%s]\n", c.Status, *c.Score, c.Name, took, strings.Join(parts, ", "))
			if lowest != "" {
				fmt.Fprintf(w, "        %s: %s\n", lowest, c.Criteria[lowest].Reason)
			}
		default:
			fmt.Fprintf(w, "%-11s   -   %s (%s)\n        %s\n", c.Status, c.Name, took, c.Error)
		}
		for _, ch := range c.Checks {
			if !ch.Passed {
				fmt.Fprintf(w, "        check %s failed: %s\n", ch.Check, ch.Detail)
			}
		}
		if len(c.UnusedMocks) > 0 {
			fmt.Fprintf(w, "        unused mocks: tools %s\n", strings.Join(c.UnusedMocks, ", "))
		}
	}
	sm := r.Summary
	line := fmt.Sprintf("%d scored, %d agent errors, %d judge errors", sm.Scored, sm.AgentErrors, sm.JudgeErrors)
	if sm.ChecksFailed > 0 {
		line += fmt.Sprintf(", %d checks failed", sm.ChecksFailed)
	}
	if sm.Score != nil {
		line += fmt.Sprintf(", mean %.2f", *sm.Score)
	} else {
		line += ", no mean"
	}
	if t := r.Thresholds; t != nil && t.Score != nil {
		line += fmt.Sprintf(" (threshold %.2f)", *t.Score)
	}
	if r.Passed {
		line += ": passed"
	} else {
		line += ": failed"
	}
	fmt.Fprintln(w, line)
	if r.Judge == evals.StandInJudge {
		fmt.Fprintln(w, standInLine)
	} else {
		fmt.Fprintf(w, "judge: %s\n", r.Judge)
	}
	fmt.Fprintf(w, "build %s\n", r.Build)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.Recorded != "" {
		fmt.Fprintf(w, "recorded %s\n", r.Recorded)
	}
}

// publisher sends a run's numbers to the board.
type publisher struct {
	url    string
	client boardv1connect.EvalServiceClient
}

// newPublisher checks --publish and finds the agent token: --token-file,
// else SYMPHONIX_TOKEN, else MONITOR_TOKEN — never a flag's value, which
// others can read in ps.
func newPublisher(raw string, getenv func(string) string, tokenFile string) (*publisher, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, cli.Usagef("--publish: want the board's URL, http://HOST:PORT or https://HOST, without credentials or a query")
	}
	var token string
	switch {
	case tokenFile != "":
		if token, err = readTokenFile(tokenFile); err != nil {
			return nil, err
		}
	case strings.TrimSpace(getenv("SYMPHONIX_TOKEN")) != "":
		token = strings.TrimSpace(getenv("SYMPHONIX_TOKEN"))
	default:
		token = strings.TrimSpace(getenv("MONITOR_TOKEN"))
	}
	if token == "" {
		return nil, cli.Usagef("--publish: an agent token is required: set SYMPHONIX_TOKEN or MONITOR_TOKEN, or give --token-file")
	}
	p := new(http.Protocols)
	if u.Scheme == "https" {
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = p
	base := strings.TrimSuffix(u.String(), "/")
	cc := connect.NewClient(connecthttp.NewTransport(&http.Client{Transport: t}, base), bearer(token))
	return &publisher{url: u.Redacted(), client: boardv1connect.NewEvalServiceClient(cc)}, nil
}

// bearer sends the token with every call.
func bearer(token string) connect.ClientInterceptor {
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			info, ok := connect.CallInfoForClientContext(ctx)
			if !ok {
				ctx, info = connect.NewClientContext(ctx)
			}
			info.RequestHeader().Set("Authorization", "Bearer "+token)
			return next(ctx, spec)
		}
	}
}

// publishRequest is what the board is sent of a run: numbers only — no
// case, input, output or reason.
func publishRequest(r *evals.Result) *boardv1.PublishEvalScoresRequest {
	s := &boardv1.EvalScore{
		Build:     r.Build,
		ScoreTime: timestamppb.New(r.At),
		Passed:    r.Passed,
		Cases:     int32(r.Total),
		Completed: int32(r.Completed),
		Scored:    int32(r.Summary.Scored),
		Criteria:  map[string]float64{},
	}
	if r.Summary.Score != nil {
		s.Score = *r.Summary.Score
	}
	maps.Copy(s.Criteria, r.Summary.Criteria)
	if t := r.Thresholds; t != nil && t.Score != nil {
		v := *t.Score
		s.Threshold = &v
	}
	return &boardv1.PublishEvalScoresRequest{Suite: r.File, Score: s}
}

// publish sends r's numbers; a run judged by the stand-in is not sent.
func (p *publisher) publish(ctx context.Context, r *evals.Result) (bool, string) {
	if r.Judge == evals.StandInJudge {
		return false, "not published: judged by the stand-in, whose scores say nothing (set JUDGE_API_KEY or OPENAI_API_KEY)"
	}
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if _, err := p.client.PublishEvalScores(ctx, publishRequest(r)); err != nil {
		return false, fmt.Sprintf("not published to %s: %v", p.url, err)
	}
	return true, "published to " + p.url
}
