package linkload

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// StormOptions say how big a fleet to bring back. Zero values take the
// documented defaults.
type StormOptions struct {
	// Agents: required; how many agents to link, then bring back.
	Agents int
	// PerProcess: the most agents one agents' process runs; zero means
	// 10,000. Each holds a socket per agent, within the open-file limit.
	PerProcess int
	// PingInterval: the board's, which agents follow; zero means the
	// board's default, 15 s.
	PingInterval time.Duration
	// DialRate: agents dialled per second when they first link; zero
	// means 2,000.
	DialRate int
	// Settle: how long to wait, once every agent is online, before the
	// board is killed, so that every agent has heard a pong saying the
	// redial window for the whole fleet; zero means PingInterval + 1 s.
	Settle time.Duration
	// BackWithin: how long the fleet may take to come back before the run
	// fails; zero means 5 minutes.
	BackWithin time.Duration
	// CPUProfile: if set, the restarted board's CPU profile is written
	// there, from its start until every agent is online again.
	CPUProfile string
	// AgentsCPUProfile: if set, each agents' process writes its CPU
	// profile there, the process's number appended (".0" and on), from
	// just before the board is killed until all its agents are back.
	AgentsCPUProfile string
	// Bare: the board's process serves a bare link service instead of a
	// board: connect-go over h2c welcoming every hello and answering every
	// ping, with no token checked and nothing stored. The same storm
	// against it is the floor that the machine, Go's HTTP/2 and the agents'
	// side set; "online in the store" is then the links it holds.
	Bare bool
	// BareAgents: the agents are raw clients of the generated API that
	// redial as agentlink does, rather than agentlink.Links (Plan.BareAgents).
	BareAgents bool
}

// StormResult is what a RunStorm measured. Times are from the moment the
// killed board's successor was started.
type StormResult struct {
	Agents, Processes int
	// FileLimit: the open-file limit the processes ran with.
	FileLimit uint64
	// Minting: minting the agents' tokens; Linking: from starting the
	// agents' processes until every agent was online in the store.
	Minting, Linking time.Duration
	// Dead: from SIGKILL until the board's process was gone.
	Dead time.Duration
	// Listening: until the new board accepted links.
	Listening time.Duration
	// Back: until every agent had come back (a welcome on a new link), as
	// the agents saw it; BackP50, BackP90: half, nine tenths of them (the
	// slowest agents' process's). Online: until the store had every agent
	// online.
	Back, BackP50, BackP90, Online time.Duration
	// Refused: dials the board refused while the fleet came back (each an
	// agent waiting 15-30 s); Unavailable: dials it answered unavailable.
	Refused, Unavailable int64
	// FDs and NotSockets: the most file descriptors the new board held
	// while the fleet came back, all of them and those that are not sockets;
	// FDsBefore and NotSocketsBefore: the killed board's, with every agent
	// linked. Samples: how many times they were read (0: they could not be).
	FDs, NotSockets, FDsBefore, NotSocketsBefore, Samples int
}

// RunStorm starts a board in a process of its own on a fresh store, links
// o.Agents agents to it from agents' processes, kills the board with
// SIGKILL, starts it again on the same store and port, and measures how the
// fleet comes back. It fails t if the fleet does not come back within
// o.BackWithin. The test binary must have a test named BoardTest that calls
// BoardChild and one named ChildTest that calls Child.
func RunStorm(t testing.TB, o StormOptions) StormResult {
	t.Helper()
	if o.Agents <= 0 {
		t.Fatalf("linkload: Agents = %d, want at least 1", o.Agents)
	}
	if o.PerProcess <= 0 {
		o.PerProcess = 10000
	}
	if o.PingInterval == 0 {
		o.PingInterval = 15 * time.Second
	}
	if o.DialRate == 0 {
		o.DialRate = 2000
	}
	if o.Settle == 0 {
		o.Settle = o.PingInterval + time.Second
	}
	if o.BackWithin == 0 {
		o.BackWithin = 5 * time.Minute
	}
	res := StormResult{Agents: o.Agents, Processes: (o.Agents + o.PerProcess - 1) / o.PerProcess}
	limit, err := raiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	res.FileLimit = limit
	// The board holds a socket per agent and a few dozen files more.
	if need := uint64(o.Agents + 100); need > limit {
		t.Fatalf("linkload: %d agents need the board to hold about %d files; the open-file limit is %d (ulimit -Hn)", o.Agents, need, limit)
	}

	dir := t.TempDir()
	start := time.Now()
	creds := mintIn(t, dir, o.Agents)
	res.Minting = time.Since(start)
	addr := freeAddr(t)
	env := []string{EnvBoard + "=1", EnvData + "=" + dir, EnvAddr + "=" + addr, EnvPing + "=" + o.PingInterval.String()}
	if o.Bare {
		env = append(env, EnvBare+"=1")
	}

	bd := startProcess(t, "board's process", BoardTest, 0, env...)
	bd.await(t, "listening", time.Minute)

	var agents []*child
	start = time.Now()
	for i := 0; i < o.Agents; i += o.PerProcess {
		plan := Plan{
			Agents:       creds[i:min(i+o.PerProcess, o.Agents)],
			DialRate:     max(1, o.DialRate/res.Processes),
			ProbeEvery:   time.Second, // no probes: unused
			AgentBackoff: true,
			BareAgents:   o.BareAgents,
		}
		path := filepath.Join(dir, "plan-"+strconv.Itoa(i)+".json")
		raw, err := json.Marshal(plan)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		var profile []string
		if o.AgentsCPUProfile != "" {
			profile = append(profile, EnvAgentsProfile+"="+o.AgentsCPUProfile+"."+strconv.Itoa(len(agents)))
		}
		agents = append(agents, startChild(t, "http://"+addr, path, 0, profile...))
	}
	linkWithin := time.Minute + time.Duration(o.Agents)*10*time.Millisecond
	for _, c := range agents {
		c.await(t, "up", linkWithin)
	}
	awaitOnline(t, bd, o.Agents, linkWithin)
	res.Linking = time.Since(start)

	// Every agent hears a pong with the fleet's window, then the board dies.
	time.Sleep(o.Settle)
	for _, c := range agents {
		c.send(t, cmdMark)
		c.await(t, "marked", time.Minute)
	}
	res.FDsBefore, res.NotSocketsBefore, _ = openFDs(bd.cmd.Process.Pid)
	killed := time.Now()
	bd.kill()
	res.Dead = time.Since(killed)

	if o.CPUProfile != "" {
		env = append(env, EnvCPUProfile+"="+o.CPUProfile)
	}
	restarted := time.Now()
	bd = startProcess(t, "board's process", BoardTest, 0, env...)
	sampling := sampleFDs(bd.cmd.Process.Pid, 200*time.Millisecond)
	ev := bd.await(t, "listening", time.Minute)
	res.Listening = time.Unix(0, ev.At).Sub(restarted)
	for _, c := range agents {
		c.send(t, cmdBack)
	}
	for _, c := range agents {
		ev := c.await(t, "back", o.BackWithin)
		res.Back = max(res.Back, time.Unix(0, ev.At).Sub(restarted))
		res.BackP50 = max(res.BackP50, time.Unix(0, ev.AtP50).Sub(restarted))
		res.BackP90 = max(res.BackP90, time.Unix(0, ev.AtP90).Sub(restarted))
		res.Refused += ev.Refused
		res.Unavailable += ev.Unavailable
	}
	awaitOnline(t, bd, o.Agents, o.BackWithin)
	res.Online = time.Since(restarted)
	fds := sampling()
	if o.CPUProfile != "" {
		bd.send(t, cmdStopProfile)
		bd.await(t, "profiled", time.Minute)
	}
	res.FDs, res.NotSockets, res.Samples = fds.all, fds.notSockets, fds.samples

	for _, c := range agents {
		c.stop()
	}
	bd.stop()
	return res
}

// mintIn mints n agent tokens, agent-00001 and on, in the store in dir,
// and closes it.
func mintIn(t testing.TB, dir string, n int) []Credential {
	t.Helper()
	db, err := store.Open(context.Background(), store.SQLiteDSN(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return mintWith(t, db, n)
}

// mintWith mints n agent tokens, agent-00001 and on, in db.
func mintWith(t testing.TB, db *ent.Client, n int) []Credential {
	t.Helper()
	tokens, err := identity.OpenTokens(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return mint(t, tokens, n)
}

// freeAddr is a loopback address nobody listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// awaitOnline asks the board until its store has n agents online.
func awaitOnline(t testing.TB, bd *child, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		bd.send(t, cmdCount)
		ev := bd.await(t, "count", time.Until(deadline)+time.Second)
		if ev.Up == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("online in the store: %d agents, want %d", ev.Up, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL, without closing its standard input
// first (which would start a graceful stop), and waits for it.
func (c *child) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
	c.stdin.Close()
}

type fdCount struct{ all, notSockets, samples int }

// sampleFDs reads process pid's file descriptors every interval until the
// returned function is called, which returns the most of each it saw.
func sampleFDs(pid int, every time.Duration) func() fdCount {
	var (
		mu   sync.Mutex
		most fdCount
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if all, notSockets, ok := openFDs(pid); ok {
				mu.Lock()
				most.all, most.notSockets = max(most.all, all), max(most.notSockets, notSockets)
				most.samples++
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() fdCount {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}

// String is the result in a line or two, for a log.
func (r StormResult) String() string {
	return fmt.Sprintf("%d agents in %d processes (open-file limit %d); minting %s, linking %s; "+
		"board dead %s after SIGKILL; from its restart: listening %s, agents back: half %s, nine tenths %s, every one %s; all online in the store %s; "+
		"refused %d, unavailable %d; board fds with every agent linked %d (%d not sockets), while they came back at most %d (%d not sockets, %d samples)",
		r.Agents, r.Processes, r.FileLimit, r.Minting.Round(time.Millisecond), r.Linking.Round(time.Millisecond),
		r.Dead.Round(time.Millisecond), r.Listening.Round(time.Millisecond),
		r.BackP50.Round(time.Millisecond), r.BackP90.Round(time.Millisecond), r.Back.Round(time.Millisecond), r.Online.Round(time.Millisecond),
		r.Refused, r.Unavailable, r.FDsBefore, r.NotSocketsBefore, r.FDs, r.NotSockets, r.Samples)
}

// MaxBoardFiles is the most files that are not sockets a board holds,
// whatever the number of agents linked: the store's connections (at most
// store.MaxSQLiteReads and one writer, each holding the database and its
// WAL open, and the shared memory index), its lock file, the runtime's
// poller and the standard streams.
const MaxBoardFiles = 2*(store.MaxSQLiteReads+1) + 16
