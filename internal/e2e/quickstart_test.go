package e2e

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/internal/exampletest"
)

// quickstartDoc is the page TestQuickstart follows.
const quickstartDoc = "../../docs/quickstart.md"

// step is one "## " section of a page: its title and its sh blocks, in
// order.
type step struct {
	title  string
	blocks []string
}

// leaveRunning marks a block that keeps running while the next steps are
// taken: its last line ends with it.
const leaveRunning = "# leave running"

// stepsOf reads the "## " sections of the Markdown page at path and the
// fenced sh blocks in each, exactly as written.
func stepsOf(t *testing.T, path string) []step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		steps []step
		block *strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block != nil && line == "```":
			if len(steps) == 0 {
				t.Fatalf("%s: an sh block before the first step", path)
			}
			steps[len(steps)-1].blocks = append(steps[len(steps)-1].blocks, block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case line == "```sh":
			block = new(strings.Builder)
		case strings.HasPrefix(line, "## "):
			steps = append(steps, step{title: strings.TrimPrefix(line, "## ")})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if block != nil {
		t.Fatalf("%s: an sh block is not closed", path)
	}
	return steps
}

// quickstart is the machine TestQuickstart follows the page on: where the
// commands run, what stands in for what, and what is running.
type quickstart struct {
	t        *testing.T
	dir      string // the checkout the commands run in
	url      string // the board's URL, as the page writes it once substituted
	replacer *strings.Replacer
	env      []string
	running  []*proc // the blocks left running, in order
	b        *browsertest.Tab
}

// freePort is a port on loopback that nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// shell runs block as the page has it, after the substitutions, with
// bash; a block left running is started and kept, any other must succeed.
func (q *quickstart) shell(block string) {
	q.t.Helper()
	script := q.replacer.Replace(block)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = q.dir
	cmd.Env = q.env
	if !strings.HasSuffix(strings.TrimSpace(block), leaveRunning) {
		out, err := cmd.CombinedOutput()
		if err != nil {
			q.t.Fatalf("the block\n%s\nfailed: %v\n%s", block, err, out)
		}
		return
	}
	// Its own process group, so that what bash starts ends with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		q.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	p := &proc{cmd: cmd, added: make(chan struct{}, 1), read: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		q.t.Fatal(err)
	}
	go p.readFrom(stdout)
	q.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-p.read
		_ = cmd.Wait()
		if q.t.Failed() {
			q.t.Logf("%s\noutput:\n%s", block, strings.Join(p.output(), "\n"))
		}
	})
	q.running = append(q.running, p)
}

// TestQuickstart follows docs/quickstart.md: it runs each sh block of the
// page, in order, exactly as written but for these substitutions, and does
// in a headless Chromium what each step says to do in the browser:
//
//   - `go run ./cmd/board` and `go run ./cmd/agent` are the binaries
//     TestMain built;
//   - the board's address, 127.0.0.1:7777, is a free port of the test's,
//     so that the test can run beside a board on this machine;
//   - the commands run in a folder of the test's own standing for the
//     checkout, with `examples/refund-desk` in it: the example's flow whose
//     orders server is the built mcp-orders (exampletest.RefundDesk), since
//     a copy outside the module cannot `go run ./mcp-orders`.
//
// A step the test does not know by its title fails it: a new step on the
// page needs its browser part here.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(governedDesk(t), filepath.Join(dir, "examples", "refund-desk")); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + freePort(t)
	q := &quickstart{
		t:   t,
		dir: dir,
		url: "http://" + addr,
		replacer: strings.NewReplacer(
			"go run ./cmd/board", filepath.Join(bin, "board"),
			"go run ./cmd/agent", filepath.Join(bin, "agent"),
			"127.0.0.1:7777", addr,
		),
		env: append(os.Environ(), "MONITOR_URL=", "MONITOR_TOKEN=", "MONITOR_DETAIL=", "OPENAI_API_KEY=",
			"SYMPHONIX_DATA=", "SYMPHONIX_DATABASE=", "SYMPHONIX_PUBLIC_URL="),
	}

	var (
		board, agent *proc
		runID        string
	)
	browser := map[string]func(){
		"1. Run the board": func() {
			board = q.running[0]
			board.waitLine(t, regexp.MustCompile(`listening on `+regexp.QuoteMeta(q.url)))
		},
		"2. Create the first admin": func() {
			link := board.waitLine(t, regexp.MustCompile(`first run: create the first admin at (\S+/setup#token=\S+) `))[1]
			q.b = browsertest.New(t)
			q.b.Do("open the link and set a password",
				chromedp.Navigate(link),
				chromedp.WaitVisible(chromedp.ID("setup-form")),
				chromedp.SetValue(chromedp.ID("setup-name"), "Grace Hopper"),
				chromedp.SetValue(chromedp.ID("setup-email"), "grace@example.com"),
				chromedp.SetValue(chromedp.ID("setup-password"), "a quickstart password"),
				chromedp.SetValue(chromedp.ID("setup-again"), "a quickstart password"),
				chromedp.Click(chromedp.ID("setup-button")),
				chromedp.WaitVisible(chromedp.ID("password")),
			)
			q.b.Do("sign in",
				chromedp.SetValue(chromedp.ID("email"), "grace@example.com"),
				chromedp.SetValue(chromedp.ID("password"), "a quickstart password"),
				chromedp.Click(chromedp.ID("password-button")),
			)
			q.b.Until("signed in as the admin", `() => document.getElementById("who").textContent === "signed in as Grace Hopper (admin)"`)
		},
		"3. Mint the refund desk's token": func() {
			if b, err := os.ReadFile(filepath.Join(dir, ".symphonix", "refund-desk.token")); err != nil || len(b) < 20 {
				t.Fatalf("the token file: %d bytes, %v; want a token", len(b), err)
			}
		},
		"4. Start the refund desk, linked to the board": func() {
			agent = q.running[1]
			agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: linked to `+regexp.QuoteMeta(q.url)))
			agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: tools: the board has not said which are on, so none are`))
		},
		"5. Switch its tools on, one off, and on again": func() {
			q.b.Do("open the tools", chromedp.Click(chromedp.ID("tab-tools")), chromedp.WaitVisible(chromedp.ID("tools")))
			flips := []struct {
				tool, state, says string
			}{
				{"orders.lookup_order", "on", `switched on 1: orders.lookup_order$`},
				{"orders.refund", "on", `switched on 2: orders.lookup_order, orders.refund$`},
				{"orders.refund", "off", `switched on 1: orders.lookup_order$`},
				{"orders.refund", "on", `switched on 2: orders.lookup_order, orders.refund$`},
			}
			seen := 0
			for _, f := range flips {
				q.b.Click("switch "+f.tool+" "+f.state, `input.switch[data-agent="refund-desk"][data-tool="`+f.tool+`"]`)
				q.b.Until(f.tool+" shown "+f.state, `(tool, state) => {
					const box = document.querySelector('input.switch[data-agent="refund-desk"][data-tool="' + tool + '"]');
					return box !== null && box.closest("li").dataset.state === state && box.checked === (state === "on");
				}`, f.tool, f.state)
				// The agent obeys: each flip is a line of its own, in order.
				seen = waitLineAfter(t, agent, seen, regexp.MustCompile(`^agent refund-desk: tools: the board `+f.says))
			}
		},
		"6. Say that refunds need a person": func() {},
		"7. Ask for a refund": func() {
			q.b.Do("open the agents", chromedp.Click(chromedp.ID("tab-agents")), chromedp.WaitVisible(chromedp.ID("agents")))
			q.b.Click("open refund-desk's page", `tr[data-agent="refund-desk"] a.name`)
			q.b.Until("the form to start a run", `() => document.getElementById("fire-form").offsetParent !== null &&
				document.querySelector('#fire-inputs [data-input="order_id"]') !== null`)
			field := func(name string) string {
				return `#fire-inputs :is(input, select, textarea)[data-input="` + name + `"]`
			}
			q.b.Do("start a run",
				chromedp.SetValue(chromedp.CSS(field("order_id")), "A-1001"),
				chromedp.SetValue(chromedp.CSS(field("request")), "The mug arrived broken; I want my money back."),
				chromedp.Click(chromedp.ID("fire-button")),
			)
			q.b.Until("the run's page", `() => location.hash.startsWith("#run/refund-desk/") && !document.getElementById("run-body").hidden`)
			q.b.Until("the run paused", `() => document.getElementById("run").dataset.state === "paused"`)
			runID = q.b.Eval(`document.getElementById("run-id").textContent`)
		},
		"8. Approve it": func() {
			q.b.Do("open the approvals", chromedp.Click(chromedp.ID("tab-approvals")), chromedp.WaitVisible(chromedp.ID("approvals")))
			card := `#queue li[data-approval]`
			q.b.UntilText("the card", card, "Refund 49.9 EUR on order A-1001 to Ada Lovelace?")
			q.b.Do("approve with a reason",
				chromedp.SetValue(chromedp.CSS(card+" textarea.reason"), "the customer sent a photo of the broken mug"),
				chromedp.Click(chromedp.CSS(card+" button.approve")),
			)
		},
		"9. See the result": func() {
			agent.waitLine(t, regexp.MustCompile(`: the board decided; the run finished$`))
			q.b.Do("open the agents", chromedp.Click(chromedp.ID("tab-agents")), chromedp.WaitVisible(chromedp.ID("agents")))
			q.b.Click("open refund-desk's page", `tr[data-agent="refund-desk"] a.name`)
			q.b.Click("open the run", `#run-rows tr[data-run="`+runID+`"][data-state="finished"] a.run-link`)
			q.b.Until("the run finished", `(id) => document.getElementById("run-id").textContent === id &&
				!document.getElementById("run-body").hidden && document.getElementById("run").dataset.state === "finished"`, runID)
			q.b.Until("its output", `() => !document.getElementById("run-output").hidden`)
			q.b.Until("its steps: the refund paid, the reply written", `() => {
				const steps = Array.from(document.querySelectorAll("#steps li.step")).map((li) => li.dataset.node + ":" + li.dataset.outcome);
				return steps.includes("pay:ok") && steps.includes("answer:ok");
			}`)
			if out := q.b.Eval(`document.getElementById("run-output").textContent`); !strings.Contains(out, `"reply": "`) {
				t.Errorf("the run's output = %s, want the reply", out)
			}
			exampletest.CheckRefundedOnce(t, filepath.Join(dir, "examples", "refund-desk"))
		},
		"Next": func() {},
	}

	steps := stepsOf(t, quickstartDoc)
	if len(steps) == 0 {
		t.Fatalf("%s: no steps", quickstartDoc)
	}
	for _, s := range steps {
		do, ok := browser[s.title]
		if !ok {
			t.Fatalf("%s: step %q is not one this test knows: say here what it does in the browser", quickstartDoc, s.title)
		}
		for _, block := range s.blocks {
			q.shell(block)
		}
		do()
		delete(browser, s.title)
	}
	for title := range browser {
		t.Errorf("%s: no step %q any more: remove it from the test", quickstartDoc, title)
	}
}

// waitLineAfter waits for a line of p matching re past its first seen
// lines, and returns how many lines it has read through that one.
func waitLineAfter(t *testing.T, p *proc, seen int, re *regexp.Regexp) int {
	t.Helper()
	deadline := time.After(ceiling)
	for {
		lines := p.output()
		for ; seen < len(lines); seen++ {
			if re.MatchString(lines[seen]) {
				return seen + 1
			}
		}
		select {
		case <-p.added:
		case <-p.read:
			if len(p.output()) == seen {
				t.Fatalf("no line matching %s: the output ended; output:\n%s", re, strings.Join(lines, "\n"))
			}
		case <-deadline:
			t.Fatalf("no line matching %s within %s; output:\n%s", re, ceiling, strings.Join(lines, "\n"))
		}
	}
}
