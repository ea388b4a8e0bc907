package linkload

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/store"
)

// AcrossOptions say how big a fleet to spread over several boards sharing
// one PostgreSQL store. Zero values take the documented defaults.
type AcrossOptions struct {
	// DSN: required; a PostgreSQL database of the run's own.
	DSN string
	// Boards: how many boards; zero means 3, at least 2.
	Boards int
	// Agents: required; how many agents to link. Each is given every
	// board's URL and starts at one at random.
	Agents int
	// PerProcess: the most agents one agents' process runs; zero means
	// 10,000.
	PerProcess int
	// PingInterval: the boards'; zero means 15 s.
	PingInterval time.Duration
	// DialRate: agents dialled per second when they first link; zero
	// means 2,000.
	DialRate int
	// Probes: agents that time their pings, all on the first board; zero
	// means 50. ProbeEvery: how often each pings; zero means 100 ms.
	// Window: how long they record; zero means 10 s.
	Probes     int
	ProbeEvery time.Duration
	Window     time.Duration
	// BackWithin: how long the dead board's agents may take to link
	// elsewhere before the run fails; zero means 5 minutes.
	BackWithin time.Duration
}

// AcrossResult is what a RunAcross measured.
type AcrossResult struct {
	Agents, Boards, Processes int
	// Linking: from starting the agents' processes until every agent was
	// online in the store.
	Linking time.Duration
	// Links: each board's links with the whole fleet linked; PerAgent: the
	// heap and stack each board holds per link it holds (bytes, from its
	// figure with no agent).
	Links    []int
	PerAgent []float64
	// RTT: the probes' ping round trips through the first board, with the
	// whole fleet linked.
	RTT RTT
	// Killed: the links the last board held when it was killed with
	// SIGKILL; Down: the agents that saw their link end (the two are
	// equal when the run is right).
	Killed, Down int
	// Back, BackP50, BackP90: from the kill until every agent that went
	// down, half of them, nine tenths of them, had a welcome from another
	// board. Refused, Unavailable: the dials the boards left refused or
	// answered unavailable meanwhile.
	Back, BackP50, BackP90 time.Duration
	Refused, Unavailable   int64
}

// RunAcross starts o.Boards boards, each in a process of its own, on the
// store o.DSN, links o.Agents agents (given every board's URL) from
// agents' processes, measures each board's memory per link and the probes'
// ping round trips through the first board, kills the last board with
// SIGKILL, and measures how its agents link to the others. The test binary
// must have the tests RunStorm needs (BoardTest and ChildTest).
func RunAcross(t testing.TB, o AcrossOptions) AcrossResult {
	t.Helper()
	if o.DSN == "" || o.Agents <= 0 {
		t.Fatalf("linkload: DSN %q and Agents %d: want a store and at least one agent", o.DSN, o.Agents)
	}
	if o.Boards == 0 {
		o.Boards = 3
	}
	if o.Boards < 2 {
		t.Fatalf("linkload: Boards = %d, want at least 2", o.Boards)
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
	if o.Probes == 0 {
		o.Probes = 50
	}
	o.Probes = min(o.Probes, o.Agents, o.PerProcess)
	if o.ProbeEvery == 0 {
		o.ProbeEvery = 100 * time.Millisecond
	}
	if o.Window == 0 {
		o.Window = 10 * time.Second
	}
	if o.BackWithin == 0 {
		o.BackWithin = 5 * time.Minute
	}
	res := AcrossResult{Agents: o.Agents, Boards: o.Boards, Processes: (o.Agents + o.PerProcess - 1) / o.PerProcess}
	limit, err := raiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	// The boards hold a socket per agent between them; the agents'
	// processes one each.
	if need := uint64(o.PerProcess + 100); need > limit {
		t.Fatalf("linkload: %d agents a process need about %d files; the open-file limit is %d (ulimit -Hn)", o.PerProcess, need, limit)
	}
	creds := mintInto(t, o.DSN, o.Agents)

	boards := make([]*child, o.Boards)
	bases := make([]*Snapshot, o.Boards)
	urls := make([]string, o.Boards)
	for i := range boards {
		addr := freeAddr(t)
		urls[i] = "http://" + addr
		boards[i] = startProcess(t, "board's process "+strconv.Itoa(i+1), BoardTest, 0,
			EnvBoard+"=1", EnvData+"="+t.TempDir(), EnvDSN+"="+o.DSN, EnvAddr+"="+addr, EnvPing+"="+o.PingInterval.String())
		bases[i] = boards[i].await(t, "listening", time.Minute).Memory
	}

	dir := t.TempDir()
	var agents []*child
	start := time.Now()
	for i := 0; i < o.Agents; i += o.PerProcess {
		plan := Plan{
			Agents:       creds[i:min(i+o.PerProcess, o.Agents)],
			DialRate:     max(1, o.DialRate/res.Processes),
			ProbeEvery:   o.ProbeEvery,
			Window:       o.Window,
			AgentBackoff: true,
		}
		if i == 0 {
			plan.Probes = o.Probes
		}
		path := filepath.Join(dir, "plan-"+strconv.Itoa(i)+".json")
		raw, err := json.Marshal(plan)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, startChild(t, strings.Join(urls, ","), path, 0))
	}
	linkWithin := time.Minute + time.Duration(o.Agents)*10*time.Millisecond
	for _, c := range agents {
		c.await(t, "up", linkWithin)
	}
	awaitOnline(t, boards[0], o.Agents, linkWithin)
	res.Linking = time.Since(start)
	time.Sleep(o.PingInterval + time.Second) // every agent has heard a pong

	for i, bd := range boards {
		bd.send(t, cmdMeasure)
		ev := bd.await(t, "report", time.Minute)
		res.Links = append(res.Links, ev.Up)
		per := 0.0
		if ev.Up > 0 && bases[i] != nil {
			per = (float64(ev.Memory.InUse()) - float64(bases[i].InUse())) / float64(ev.Up)
		}
		res.PerAgent = append(res.PerAgent, per)
	}
	agents[0].send(t, cmdMeasure)
	if ev := agents[0].await(t, "report", o.Window+time.Minute); ev.RTT != nil {
		res.RTT = *ev.RTT
	}

	for _, c := range agents {
		c.send(t, cmdMark)
		c.await(t, "marked", time.Minute)
	}
	last := boards[len(boards)-1]
	last.send(t, cmdCountHere)
	res.Killed = last.await(t, "count", time.Minute).Up
	killed := time.Now()
	last.kill()
	time.Sleep(time.Second) // every link the board held has ended
	for _, c := range agents {
		c.send(t, cmdMoved)
	}
	for _, c := range agents {
		ev := c.await(t, "moved", o.BackWithin)
		res.Down += ev.Down
		res.Back = max(res.Back, time.Unix(0, ev.At).Sub(killed))
		res.BackP50 = max(res.BackP50, time.Unix(0, ev.AtP50).Sub(killed))
		res.BackP90 = max(res.BackP90, time.Unix(0, ev.AtP90).Sub(killed))
		res.Refused += ev.Refused
		res.Unavailable += ev.Unavailable
	}
	for _, c := range agents {
		c.stop()
	}
	for _, bd := range boards[:len(boards)-1] {
		bd.stop()
	}
	return res
}

func (r AcrossResult) String() string {
	var per []string
	for i := range r.Links {
		per = append(per, fmt.Sprintf("%d links, %.1f KiB each", r.Links[i], r.PerAgent[i]/1024))
	}
	return fmt.Sprintf("%d agents over %d boards (%s), linked in %v; ping through the first board: p50 %v, p99 %v (%d samples); "+
		"the last board killed holding %d links: %d went down, back elsewhere: half %v, nine tenths %v, all %v; refused %d, unavailable %d",
		r.Agents, r.Boards, strings.Join(per, "; "), r.Linking.Round(time.Millisecond), r.RTT.P50, r.RTT.P99, r.RTT.Samples,
		r.Killed, r.Down, r.BackP50.Round(time.Millisecond), r.BackP90.Round(time.Millisecond), r.Back.Round(time.Millisecond), r.Refused, r.Unavailable)
}

// mintInto mints n agent tokens, agent-00001 and on, in the store dsn.
func mintInto(t testing.TB, dsn string, n int) []Credential {
	t.Helper()
	db, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return mintWith(t, db, n)
}
