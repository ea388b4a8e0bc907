package linkload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// Options say how big a load to put on the board. Zero values take the
// documented defaults.
type Options struct {
	// Agents: required; how many agents to link.
	Agents int
	// Probes: how many of Agents time their pings; zero means a tenth of
	// Agents, at least 1 and at most 50.
	Probes int
	// PingInterval: the board's, which agents follow; zero means the
	// board's default, 15 s.
	PingInterval time.Duration
	// DialRate: agents dialled per second; zero means 500.
	DialRate int
	// Settle: how long to wait once every agent is online before measuring;
	// zero means two ping intervals.
	Settle time.Duration
	// ProbeEvery: how often a probe pings; zero means 100 ms.
	ProbeEvery time.Duration
	// Window: how long the probes record round trips; zero means 10 s.
	Window time.Duration
	// TLS: serve HTTP/2 over TLS (h2 by ALPN) rather than h2c.
	TLS bool
	// HealthEvery: when set, every agent but the probes reports a health
	// round this often, each one new (Plan.HealthEvery).
	HealthEvery time.Duration
	// RunEvery: when set, every agent but the probes finishes a run of
	// RunSteps steps this often (Plan.RunEvery).
	RunEvery time.Duration
	// RunsUnsent: with RunEvery, the agents make the same runs but send
	// the board nothing of them (Plan.RunsUnsent).
	RunsUnsent bool
	// ProfileDir: if set, the board's heap profile (heap.pprof) and its
	// goroutines (goroutines.txt) are written there while every agent is linked.
	ProfileDir string
	// Trace: if set, the board's execution trace over the window is
	// written there (go tool trace).
	Trace string
	// CPUProfile: if set, the board's CPU profile over the window is
	// written there.
	CPUProfile string
	// ProbesApart: the probes run in a process of their own rather than
	// beside the other agents, so that their round trips are not delayed
	// by the load's own process (its collections, its scheduling): in a
	// fleet each agent is a process of its own.
	ProbesApart bool
	// Bare: a bare link service (bareLink) in the board's place, in this
	// process over h2c: it welcomes, answers pings and says each run
	// summary is stored, and keeps nothing. The floor under the board: what
	// the same fleet costs the machine, HTTP/2 and connect alone. A Result
	// then has no store figures (HealthRounds, RunProblems, StoreBytes),
	// and its Runs are the summaries the bare service answered.
	Bare bool
	// LoadNice: with ProbesApart, the process of the agents that are not
	// probes runs at this niceness (1 to 19), so that the kernel gives the
	// board and the probes a CPU first. It stands in for a fleet whose
	// agents run on machines of their own, which this harness cannot have.
	LoadNice int
}

// Result is what a Run measured.
type Result struct {
	Agents int
	Probes int
	// Minting: how long minting the agents' tokens took.
	Minting time.Duration
	// Linking: from starting the agents' process until every agent was
	// online in the store.
	Linking time.Duration
	// Before and After: the board's process, without agents and with them.
	Before, After Snapshot
	// Board: what each agent cost the board.
	Board PerAgent
	// Child: the agents' process with every agent linked (with
	// ProbesApart, the process of the agents that are not probes).
	Child Snapshot
	RTT   RTT
	// BoardCPU and ChildCPU: the CPU the board and the agents' processes
	// used during the window, in cores.
	BoardCPU, ChildCPU float64
	// BoardCPUWait: how long, a second of the window, the board's threads
	// were ready to run and waited for a CPU the kernel gave to another
	// thread or process; -1 where it cannot be read.
	BoardCPUWait time.Duration
	// Up: agents the child had linked at the end of the window.
	Up int
	// DropsLinking: links that ended while the agents were linking, and
	// were dialled again; Drops: all that ended, up to the end of the window.
	DropsLinking, Drops int64
	// HealthRounds: the health rounds the board kept, from the first link
	// to the end of the window.
	HealthRounds int
	// Runs: the runs the board kept, from the first link to the end of the
	// window (with Options.Bare, the summaries the bare service answered).
	Runs int
	// RunProblems: the run events the board dropped or only partly took,
	// by reason (board.Board.RunEventProblems), to the end of the window.
	RunProblems map[string]int64
	// StoreBytes: the store's files once the board has stopped (its
	// write-ahead log folded in).
	StoreBytes int64
}

// Run starts a board in this process and o.Agents agents in a child
// process, measures, and stops both. It fails t if the agents do not all
// come online or the child does not answer. The test binary must have a
// test named ChildTest that calls Child.
func Run(t testing.TB, o Options) Result {
	t.Helper()
	if o.Agents <= 0 {
		t.Fatalf("linkload: Agents = %d, want at least 1", o.Agents)
	}
	if o.LoadNice < 0 || o.LoadNice > 19 {
		t.Fatalf("linkload: LoadNice = %d, want 0 to 19", o.LoadNice)
	}
	if o.Probes == 0 {
		o.Probes = min(50, max(1, o.Agents/10))
	}
	o.Probes = min(o.Probes, o.Agents)
	if o.PingInterval == 0 {
		o.PingInterval = 15 * time.Second
	}
	if o.DialRate == 0 {
		o.DialRate = 500
	}
	if o.Settle == 0 {
		o.Settle = 2 * o.PingInterval
	}
	if o.ProbeEvery == 0 {
		o.ProbeEvery = 100 * time.Millisecond
	}
	if o.Window == 0 {
		o.Window = 10 * time.Second
	}
	if o.Bare && o.TLS {
		t.Fatal("linkload: Bare serves h2c only, not TLS")
	}
	res := Result{Agents: o.Agents, Probes: o.Probes}

	start := time.Now()
	var (
		bt     *boardtest.Board
		bare   *bareLink
		url    string
		creds  []Credential
		online func() int // agents linked, as the board counts them
	)
	if o.Bare {
		bare, url, creds = serveBare(t, o)
		online = func() int { return int(bare.live.Load()) }
	} else {
		bt = boardtest.Start(t, boardtest.Options{PingInterval: o.PingInterval, TLS: o.TLS})
		url, creds = bt.URL, mint(t, bt.Board.Tokens(), o.Agents)
		online = func() int {
			n, err := bt.Store.Agent.Query().Where(agent.Online(true)).Count(context.Background())
			if err != nil {
				t.Fatalf("count online agents: %v", err)
			}
			return n
		}
	}
	plan := Plan{
		Agents:      creds,
		Probes:      o.Probes,
		DialRate:    o.DialRate,
		ProbeEvery:  o.ProbeEvery,
		Window:      o.Window,
		HealthEvery: o.HealthEvery,
		RunEvery:    o.RunEvery,
		RunsUnsent:  o.RunsUnsent,
	}
	res.Minting = time.Since(start)
	if bt != nil {
		plan.CA = bt.CertPEM()
	}
	plans := []Plan{plan}
	if o.ProbesApart && o.Probes < o.Agents {
		probes, rest := plan, plan
		probes.Agents, rest.Agents, rest.Probes = plan.Agents[:o.Probes], plan.Agents[o.Probes:], 0
		plans = []Plan{probes, rest}
	}

	res.Before = Measure()

	children := make([]*child, len(plans))
	for i, p := range plans {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "plan.json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		nice := 0
		if i > 0 {
			nice = o.LoadNice // the agents that are not probes
		}
		children[i] = startChild(t, url, path, nice)
	}
	start = time.Now()
	linkWithin := 30*time.Second + time.Duration(o.Agents)*10*time.Millisecond
	up := 0
	for _, c := range children {
		ev := c.await(t, "up", linkWithin)
		res.DropsLinking += ev.Drops
		up += ev.Up
	}
	deadline := time.Now().Add(linkWithin)
	for n := online(); n != o.Agents; n = online() {
		if time.Now().After(deadline) {
			t.Fatalf("online in the store: %d agents, want %d (the agents' processes say %d up)", n, o.Agents, up)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.Linking = time.Since(start)

	time.Sleep(o.Settle)
	res.After = Measure()
	res.Board = res.After.Per(res.Before, o.Agents)
	if o.ProfileDir != "" {
		writeProfiles(t, o.ProfileDir)
	}

	// The window's trace and CPU profile, when asked for; stopped after the
	// window, or when Run fails before.
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	if o.Trace != "" {
		stops = append(stops, record(t, o.Trace, trace.Start, trace.Stop))
	}
	if o.CPUProfile != "" {
		stops = append(stops, record(t, o.CPUProfile, pprof.StartCPUProfile, pprof.StopCPUProfile))
	}
	for _, c := range children {
		c.send(t, cmdMeasure)
	}
	cpu, wall := cpuTime(), time.Now()
	waited, waitOK := cpuWait()
	for i, c := range children {
		ev := c.await(t, "report", o.Window+time.Minute)
		if i == 0 {
			res.RTT = *ev.RTT // the probes are the first process's first agents
		}
		res.Child = *ev.Memory
		res.Up += ev.Up
		res.Drops += ev.Drops
		res.ChildCPU += ev.CPU
	}
	res.BoardCPU = cores(cpuTime()-cpu, time.Since(wall))
	res.BoardCPUWait = -1
	if now, ok := cpuWait(); ok && waitOK {
		res.BoardCPUWait = time.Duration(float64(now-waited) / time.Since(wall).Seconds())
	}
	for _, stop := range stops {
		stop()
	}
	stops = nil
	if n := online(); n != o.Agents {
		t.Errorf("online after the window: %d agents, want %d", n, o.Agents)
	}
	if bare != nil {
		res.Runs = int(bare.stored.Load())
		for _, c := range children {
			c.stop()
		}
		return res
	}
	var err error
	res.HealthRounds, err = bt.Store.HealthRound.Query().Count(context.Background())
	if err != nil {
		t.Fatalf("count health rounds: %v", err)
	}
	res.Runs, err = bt.Store.Run.Query().Count(context.Background())
	if err != nil {
		t.Fatalf("count runs: %v", err)
	}
	res.RunProblems = bt.Board.RunEventProblems()
	for _, c := range children {
		c.stop()
	}
	bt.Stop()
	res.StoreBytes = dirBytes(t, bt.Dir)
	return res
}

// serveBare serves a bareLink in this process on loopback until t ends,
// and returns it, its URL and credentials for o.Agents agents (it checks
// none).
func serveBare(t testing.TB, o Options) (*bareLink, string, []Credential) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &bareLink{ping: o.PingInterval}
	shutdown, served := l.serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(ctx)
		select {
		case err := <-served:
			t.Errorf("the bare link service: %v", err)
		default:
		}
	})
	creds := make([]Credential, o.Agents)
	for i := range creds {
		creds[i] = Credential{Name: fmt.Sprintf("agent-%05d", i+1), Token: "unchecked"}
	}
	return l, "http://" + ln.Addr().String(), creds
}

// dirBytes is the size of the files in dir.
func dirBytes(t testing.TB, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// mint mints n agent tokens, agent-00001 and on, a few at a time.
func mint(t testing.TB, tokens *identity.Tokens, n int) []Credential {
	t.Helper()
	out := make([]Credential, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("agent-%05d", i+1)
				m, err := tokens.Mint(context.Background(), identity.MintOptions{Kind: identity.KindAgent, Name: name})
				out[i], errs[i] = Credential{Name: name, Token: m.Token}, err
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("mint %s: %v", out[i].Name, err)
		}
	}
	return out
}

// record starts writing what start records (an execution trace, a CPU
// profile) to a new file at path; the returned function stops it and
// closes the file.
func record(t testing.TB, path string, start func(io.Writer) error, stop func()) func() {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := start(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() {
		stop()
		f.Close()
	}
}

func writeProfiles(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name, file string
		debug      int
	}{{"heap", "heap.pprof", 0}, {"goroutine", "goroutines.txt", 1}} {
		var buf bytes.Buffer
		if err := pprof.Lookup(p.name).WriteTo(&buf, p.debug); err != nil {
			t.Fatalf("%s profile: %v", p.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, p.file), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// child is a process of the test binary: the agents, or a board.
type child struct {
	what   string // names it in errors
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan Event
	done   chan struct{} // closed when stdout ends
	stderr *tail
}

// startChild runs the test binary again as the agents' process, with env
// added to this process's environment. It is killed when the test ends,
// whatever happened.
func startChild(t testing.TB, url, planPath string, nice int, env ...string) *child {
	t.Helper()
	return startProcess(t, "agents' process", ChildTest, nice, append([]string{EnvChild + "=1", EnvURL + "=" + url, EnvPlan + "=" + planPath}, env...)...)
}

// startProcess runs the test binary again as test, with env added to this
// process's environment; what names it in errors. With nice above zero it
// runs at that niceness (nice(1)), every thread of it from the start. It is
// killed when the test ends, whatever happened.
func startProcess(t testing.TB, what, test string, nice int, env ...string) *child {
	t.Helper()
	args := []string{os.Args[0], "-test.run=^" + test + "$", "-test.count=1", "-test.timeout=0"}
	if nice > 0 {
		args = append([]string{"nice", "-n", strconv.Itoa(nice)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	c := &child{what: what, cmd: cmd, events: make(chan Event, 16), done: make(chan struct{}), stderr: &tail{max: 8 << 10}}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the %s: %v", what, err)
	}
	t.Cleanup(c.stop)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.HasPrefix(line, []byte("{")) {
				continue // the test binary's own PASS and FAIL
			}
			var ev Event
			if err := json.Unmarshal(line, &ev); err != nil {
				continue
			}
			c.events <- ev
		}
	}()
	return c
}

// await returns the child's next event of kind, and fails t if the child
// reports an error, ends, or says nothing within d.
func (c *child) await(t testing.TB, kind string, d time.Duration) Event {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev := <-c.events:
			switch ev.Kind {
			case kind:
				return ev
			case "error":
				t.Fatalf("%s: %s", c.what, ev.Error)
			}
		case <-c.done:
			t.Fatalf("%s ended before %q; its stderr:\n%s", c.what, kind, c.stderr)
		case <-timer.C:
			t.Fatalf("%s: no %q within %s; its stderr:\n%s", c.what, kind, d, c.stderr)
		}
	}
}

func (c *child) send(t testing.TB, cmd string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, cmd+"\n"); err != nil {
		t.Fatalf("%s: %v", c.what, err)
	}
}

// stop kills the child and waits for it. Stopping twice is harmless.
func (c *child) stop() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.stdin.Close()
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if over := len(w.b) - w.max; over > 0 {
		w.b = append(w.b[:0], w.b[over:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.b))
}
