package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/journal"
)

const afTriage = `workflow triage(input: Ticket, context: Who) -> Triage {
  use team "triagers@1" as triager
  type Ticket { text: text }
  type Who { team: text }
  type Label { label: text }
  type Triage { team: text, label: text }
  pipeline {
    stage label -> Label {
      emit progress { note: input.text }
      return agent(triager.main) {
        task "Label the ticket"
        input { text: input.text }
        expect Label
        retry { attempts: 1, on: [rate_limit] }
      }
    }
    return { team: context.team, label: label.label }
  }
}
`

// tokenProvider is an OpenAI-compatible chat-completions server that
// answers with answer and reports usage; a 429 first when limited.
type tokenProvider struct {
	answer  string
	mu      sync.Mutex
	limited bool
	prompts []string
}

func (p *tokenProvider) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.prompts = append(p.prompts, body.Messages[len(body.Messages)-1].Content)
		limited := p.limited
		p.limited = false
		p.mu.Unlock()
		if limited {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": p.answer}}},
			"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func triageEnv(srv *httptest.Server) map[string]string {
	return map[string]string{"OPENAI_API_KEY": "sk-test-af-0123456789", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "gpt-test"}
}

// TestAgentRunAFContext: --context is held to the workflow's context type,
// bounded as --input is, refused for a workflow without one, and the
// workflow reads it.
func TestAgentRunAFContext(t *testing.T) {
	t.Parallel()
	paths := afFiles(t, map[string]string{"triage.af": afTriage, "plain.af": "workflow plain(input: any) -> number {\n  pipeline {\n    return 1\n  }\n}\n"})
	srv := (&tokenProvider{answer: `{"label":"bug"}`}).start(t)
	in := `{"text":"it crashes"}`
	r := runAgent(t, triageEnv(srv), "", "run", paths["triage.af"], "--input", in, "--context", `{"team":"core"}`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != `{
  "label": "bug",
  "team": "core"
}` && !strings.Contains(r.stdout, `"team": "core"`) {
		t.Fatalf("agent run --context: exit %d, stdout %q, stderr %q; want the team from the context", r.code, r.stdout, r.stderr)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong type", []string{paths["triage.af"], "--input", in, "--context", `{"team":3}`}, "--context: agentflow: the context does not fit: context.team is number, want text"},
		{"missing", []string{paths["triage.af"], "--input", in}, "--context"},
		{"not JSON", []string{paths["triage.af"], "--input", in, "--context", `{team`}, "--context: not JSON"},
		{"two values", []string{paths["triage.af"], "--input", in, "--context", `{} {}`}, "--context: more than one JSON value"},
		{"too long", []string{paths["triage.af"], "--input", in, "--context", `"` + strings.Repeat("x", maxInputBytes) + `"`}, "--context: 1048578 bytes, more than the 1048576"},
		{"no context type", []string{paths["plain.af"], "--context", `{}`}, "--context: workflow plain takes no context"},
	} {
		r := runAgent(t, triageEnv(srv), "", append([]string{"run"}, tt.args...)...)
		if r.code != 2 || !strings.Contains(errText(r), tt.want) {
			t.Errorf("%s: exit %d, error %q; want a usage error saying %q", tt.name, r.code, errText(r), tt.want)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "flow"), 0o700); err != nil {
		t.Fatal(err)
	}
	r = runAgent(t, triageEnv(srv), "", "run", filepath.Join(dir, "flow"), "--context", `{}`)
	if r.code != 2 || !strings.Contains(errText(r), "--context: only for an Agent Flow file") {
		t.Errorf("agent run DIR --context: exit %d, %q; want a usage error", r.code, errText(r))
	}
}

// TestAgentRunAFJournal: each try of an agent() call is a line of the
// journal in the file's folder, as a flow's model call is: kind llm, named
// for the alias, the run's id, its duration and tokens; what was sent and
// what came back only with --journal-detail full.
func TestAgentRunAFJournal(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{false, true} {
		paths := afFiles(t, map[string]string{"triage.af": afTriage})
		p := &tokenProvider{answer: `{"label":"bug"}`, limited: true}
		srv := p.start(t)
		args := []string{"run", paths["triage.af"], "--input", `{"text":"it crashes"}`, "--context", `{"team":"core"}`}
		if full {
			args = append(args, "--journal-detail", "full")
		}
		r := runAgent(t, triageEnv(srv), "", args...)
		if r.code != 0 {
			t.Fatalf("agent run: exit %d, stderr %s", r.code, r.stderr)
		}
		path := journal.Path(filepath.Dir(paths["triage.af"]))
		if !strings.Contains(r.stderr, "journal: "+path) {
			t.Errorf("stderr %q; want the journal's line naming %s", r.stderr, path)
		}
		es, err := journal.Read(path, 0, journal.KindLLM)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 2 {
			t.Fatalf("the journal holds %d model calls: %+v; want 2 (a 429, then the retry)", len(es), es)
		}
		second, first := es[0], es[1] // newest first
		if first.OK || !strings.Contains(first.Error, "429") || !second.OK || first.Name != "triager" || second.Name != "triager" ||
			first.Run == "" || second.Run != first.Run || second.Tokens == nil || second.Tokens.Total != 18 || second.DurationMS < 0 {
			t.Errorf("journal = %+v, %+v; want the failed try and the answered one, named triager, of one run, 18 tokens spent", first, second)
		}
		if full {
			if !strings.Contains(second.Prompt, "Label the ticket") || second.Reply != `{"label":"bug"}` {
				t.Errorf("full detail: prompt %q, reply %q; want both", second.Prompt, second.Reply)
			}
		} else if second.Prompt != "" || second.Reply != "" || strings.Join(second.Withheld, ",") != "prompt,reply" {
			t.Errorf("metadata: %+v; want the prompt and reply withheld", second)
		}
	}
}

// TestAgentRunAFOnTheBoard: agent run FILE.af --monitor reports the run to
// a real board over a real link: the board stores it finished, started by
// the command line, with the stage, the agent() call and the emit progress
// as its steps, and the tokens spent; and nothing the run was given, sent
// or got back (the ticket's words, the model's answer, the progress's
// payload) crosses to the board, unless MONITOR_DETAIL=full, which sends
// the input and output.
func TestAgentRunAFOnTheBoard(t *testing.T) {
	t.Parallel()
	const marker = "zebra-7Q4-marker"
	for _, full := range []bool{false, true} {
		t.Run(map[bool]string{false: "metadata", true: "full"}[full], func(t *testing.T) {
			t.Parallel()
			bt := boardtest.Start(t, boardtest.Options{})
			paths := afFiles(t, map[string]string{"triage.af": afTriage})
			srv := (&tokenProvider{answer: `{"label":"answer-` + marker + `"}`}).start(t)
			env := triageEnv(srv)
			if full {
				env["MONITOR_DETAIL"] = "full"
			}
			r := runAgent(t, env, "", "run", paths["triage.af"], "--input", `{"text":"ticket `+marker+`"}`, "--context", `{"team":"core"}`,
				"--monitor", bt.URL, "--token", bt.AgentToken("triage"))
			if r.code != 0 {
				t.Fatalf("agent run --monitor: exit %d, stderr %s", r.code, r.stderr)
			}
			rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
			var run *boardv1.Run
			boardtest.Eventually(t, time.Minute, "the finished run, stored by the board", func() bool {
				res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "triage"})
				if err != nil || len(res.GetRuns()) != 1 || res.GetRuns()[0].GetState() != boardv1.RunState_RUN_STATE_FINISHED {
					return false
				}
				got, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "triage", Id: res.GetRuns()[0].GetId()})
				run = got.GetRun()
				return err == nil
			})
			var steps []string
			for _, s := range run.GetSteps() {
				steps = append(steps, s.GetNode()+"/"+s.GetKind()+"/"+strings.ToLower(strings.TrimPrefix(s.GetOutcome().String(), "STEP_OUTCOME_")))
			}
			if got := strings.Join(steps, " "); got != "label/stage/ok progress/progress/ok triager/agent/ok" {
				t.Errorf("the run's steps = %s; want the stage, the progress and the agent() call, each ok", got)
			}
			if run.GetStartedBy() != "cli" || run.GetTokens().GetTotal() != 18 || !strings.HasPrefix(run.GetBuild(), "sha256:") {
				t.Errorf("the run = started by %q, %d tokens, build %q; want cli, 18, the file's digest", run.GetStartedBy(), run.GetTokens().GetTotal(), run.GetBuild())
			}
			shown, err := protojson.Marshal(run)
			if err != nil {
				t.Fatal(err)
			}
			stored := storeOf(t, bt.Dir)
			if full {
				if !bytes.Contains(shown, []byte("ticket "+marker)) || !bytes.Contains(shown, []byte("answer-"+marker)) {
					t.Errorf("with full detail, GetRun = %s; want the input and the output", shown)
				}
				return
			}
			if !strings.Contains(strings.Join(run.GetWithheld(), ","), "input") || !strings.Contains(strings.Join(run.GetWithheld(), ","), "output") {
				t.Errorf("withheld = %v; want input and output named", run.GetWithheld())
			}
			if bytes.Contains(shown, []byte(marker)) {
				t.Errorf("GetRun shows the marker: %s", shown)
			}
			if i := bytes.Index(stored, []byte(marker)); i >= 0 {
				t.Errorf("the board's store holds the marker: %q", stored[max(0, i-200):min(len(stored), i+100)])
			}
		})
	}
}

// storeOf is every file of the board's store folder, one after the other.
func storeOf(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		all = append(all, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestAgentRunAFRefusedToken: a token the board refuses stops the run with
// the link's error, rather than running unreported.
func TestAgentRunAFRefusedToken(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	paths := afFiles(t, map[string]string{"triage.af": afTriage})
	srv := (&tokenProvider{answer: `{"label":"bug"}`}).start(t)
	r := runAgent(t, triageEnv(srv), "", "run", paths["triage.af"], "--input", `{"text":"x"}`, "--context", `{"team":"core"}`,
		"--monitor", bt.URL, "--token", bt.AgentToken("someone-else"))
	if r.code == 0 || r.stdout != "" || !strings.Contains(errText(r), "refused the agent's token") {
		t.Errorf("agent run with another agent's token: exit %d, stdout %q, error %q; want a failure", r.code, r.stdout, errText(r))
	}
}

// TestAgentRunAFFailedOnTheBoard: a run whose agent() answer does not fit
// is stored failed, its agent() step and its stage failed, with why.
func TestAgentRunAFFailedOnTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	paths := afFiles(t, map[string]string{"triage.af": afTriage})
	srv := (&tokenProvider{answer: `{"label":3}`}).start(t)
	r := runAgent(t, triageEnv(srv), "", "run", paths["triage.af"], "--input", `{"text":"x"}`, "--context", `{"team":"core"}`,
		"--monitor", bt.URL, "--token", bt.AgentToken("triage"))
	if r.code != 1 {
		t.Fatalf("agent run: exit %d, stderr %s; want 1", r.code, r.stderr)
	}
	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	var run *boardv1.Run
	boardtest.Eventually(t, time.Minute, "the failed run, stored by the board", func() bool {
		res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "triage"})
		if err != nil || len(res.GetRuns()) != 1 || res.GetRuns()[0].GetState() != boardv1.RunState_RUN_STATE_FAILED {
			return false
		}
		got, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "triage", Id: res.GetRuns()[0].GetId()})
		run = got.GetRun()
		return err == nil
	})
	var steps []string
	for _, s := range run.GetSteps() {
		steps = append(steps, s.GetNode()+"/"+strings.ToLower(strings.TrimPrefix(s.GetOutcome().String(), "STEP_OUTCOME_")))
	}
	if got := strings.Join(steps, " "); got != "label/failed progress/ok triager/failed" || !strings.Contains(run.GetError(), "label is number, want text") {
		t.Errorf("the run's steps = %s, error %q; want the stage and the call failed, saying why", got, run.GetError())
	}
}
