package linkload_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/linkload"
)

var approvalConcurrency = flag.String("approval-concurrency", "1,8,32",
	"BenchmarkApprovals: comma-separated numbers of operator–agent pairs working at once, one sub-benchmark each")

var approvalBoards = flag.Int("boards", 1,
	"BenchmarkApprovals: boards on the one store (with -postgres), in this process; agent i links to board i mod boards, and its approvals are decided on the next board, so that every decision crosses boards")

var approvalPostgres = flag.Bool("postgres", false,
	"BenchmarkApprovals: keep the board's store on a fresh PostgreSQL database (boardtest.PostgresDSN: SYMPHONIX_TEST_POSTGRES or postgres@127.0.0.1:5432) rather than SQLite")

// TestApprovalsSmall runs the approvals benchmark's machinery on a few
// agents: every approval raised is decided and delivered to its agent.
func TestApprovalsSmall(t *testing.T) {
	const n, conc, count = 50, 8, 160
	ab := startApprovals(t, boardtest.Options{}, n, conc, 1)
	r := ab.run(t, conc, func(work chan<- struct{}) {
		for range count {
			work <- struct{}{}
		}
	})
	logApprovals(t, r)
	if r.Approvals != count {
		t.Errorf("approvals delivered = %d, want %d", r.Approvals, count)
	}
	for name, s := range map[string]linkload.RTT{"raise → delivered": r.RaiseToDelivered, "decide → delivered": r.DecideToDelivered} {
		if s.P50 <= 0 || s.P99 < s.P50 {
			t.Errorf("%s: p50 = %s, p99 = %s, want 0 < p50 <= p99", name, s.P50, s.P99)
		}
	}
	if r.RaiseToDelivered.P50 < r.DecideToDelivered.P50 {
		t.Errorf("raise → delivered p50 %s < decide → delivered p50 %s, want it no shorter", r.RaiseToDelivered.P50, r.DecideToDelivered.P50)
	}
}

// TestApprovalsAcrossBoards runs the approvals benchmark's machinery on
// three boards sharing a PostgreSQL store: every approval, raised through
// one board and decided through another, is delivered to its agent.
func TestApprovalsAcrossBoards(t *testing.T) {
	const n, conc, count = 30, 6, 60
	ab := startApprovals(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)}, n, conc, 3)
	r := ab.run(t, conc, func(work chan<- struct{}) {
		for range count {
			work <- struct{}{}
		}
	})
	logApprovals(t, r)
	if r.Approvals != count {
		t.Errorf("approvals delivered = %d, want %d", r.Approvals, count)
	}
}

// BenchmarkApprovals links -agents agents to one board on SQLite
// (synchronous=FULL), or on PostgreSQL with -postgres, governs every approval by one rule, and for each
// -approval-concurrency runs that many operator–agent pairs: an agent
// raises (agentlink.Link.Raise), an operator decides yes over the
// ApprovalService with the raise's digest, and the time until the agent's
// OnDecision fires is measured. One op is one approval; ns/op is the
// inverse of the throughput. Run it with a fixed count:
//
//	go test -run='^$' -bench=BenchmarkApprovals -benchtime=2000x -timeout=30m ./internal/linkload [-args -postgres]
func BenchmarkApprovals(b *testing.B) {
	var concs []int
	for _, f := range strings.Split(*approvalConcurrency, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > *agents {
			b.Fatalf("-approval-concurrency: %q: want numbers from 1 to -agents (%d)", f, *agents)
		}
		concs = append(concs, c)
	}
	var opts boardtest.Options
	if *approvalPostgres {
		opts.DSN = boardtest.PostgresDSN(b)
	}
	if *approvalBoards < 1 || *approvalBoards > 1 && opts.DSN == "" {
		b.Fatalf("-boards %d: want 1, or more with -postgres", *approvalBoards)
	}
	ab := startApprovals(b, opts, *agents, slices.Max(concs), *approvalBoards)
	b.Logf("%d agents linked in %s (tokens minted in %s)", *agents, ab.linking.Round(time.Millisecond), ab.minting.Round(time.Millisecond))
	for _, c := range concs {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			// Warm up: every operator's connection, the store's pool.
			ab.run(b, c, func(work chan<- struct{}) {
				for range 4 * c {
					work <- struct{}{}
				}
			})
			r := ab.run(b, c, func(work chan<- struct{}) {
				for b.Loop() {
					work <- struct{}{}
				}
			})
			logApprovals(b, r)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(r.RaiseToDelivered.P50), "p50-ms")
			b.ReportMetric(ms(r.RaiseToDelivered.P99), "p99-ms")
			b.ReportMetric(ms(r.DecideToDelivered.P50), "decide-p50-ms")
			b.ReportMetric(ms(r.DecideToDelivered.P99), "decide-p99-ms")
			b.ReportMetric(r.PerSecond, "approvals/s")
		})
	}
}

// approvalLoad is a board with agents linked and operators ready to decide.
type approvalLoad struct {
	agents []*raiser
	// operators: operator w's client of each board, by board; agent i is
	// linked to board i mod boards.
	operators [][]boardv1connect.ApprovalServiceClient
	boards    int
	seq       atomic.Int64
	// minting and linking: how long minting the agents' tokens and linking
	// them took.
	minting, linking time.Duration
}

// raiser is one linked agent and the decisions its OnDecision received.
type raiser struct {
	name      string
	link      *agentlink.Link
	delivered chan delivered
	extra     atomic.Int64 // decisions that found delivered full
}

type delivered struct {
	d  agentlink.Decision
	at time.Time
}

// startApprovals starts boards boards on opts' store (SQLite in a
// temporary folder unless opts.DSN says otherwise: several boards need
// PostgreSQL), puts a rule governing every approval, links n agents
// (agentlink, in this process; agent i to board i mod boards) and readies
// operators operators, each with a connection of its own to each board.
// The links end before the boards stop.
func startApprovals(tb testing.TB, opts boardtest.Options, n, operators, boards int) *approvalLoad {
	tb.Helper()
	bts := make([]*boardtest.Board, boards)
	for i := range bts {
		bts[i] = boardtest.Start(tb, opts)
	}
	bt := bts[0]
	ctx := context.Background()
	admin := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("admin", identity.RoleAdmin)))
	quorum := int32(1)
	if _, err := admin.PutRule(ctx, &boardv1.PutRuleRequest{Rule: &boardv1.Rule{
		Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: &quorum,
	}}); err != nil {
		tb.Fatalf("PutRule: %v", err)
	}
	al := &approvalLoad{boards: boards}
	for i := range operators {
		token := bt.OperatorToken(fmt.Sprintf("operator-%02d", i+1), identity.RoleApprover)
		var clients []boardv1connect.ApprovalServiceClient
		for _, on := range bts {
			clients = append(clients, boardv1connect.NewApprovalServiceClient(on.Client(token)))
		}
		al.operators = append(al.operators, clients)
	}

	start := time.Now()
	tokens := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				m, err := bt.Board.Tokens().Mint(ctx, identity.MintOptions{Kind: identity.KindAgent, Name: agentName(i)})
				tokens[i], errs[i] = m.Token, err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatalf("mint agent tokens: %v", err)
	}
	al.minting = time.Since(start)

	start = time.Now()
	linkCtx, cancel := context.WithCancel(ctx)
	var up atomic.Int64
	var links sync.WaitGroup
	tb.Cleanup(func() {
		cancel()
		links.Wait()
	})
	for i := range n {
		a := &raiser{name: agentName(i), delivered: make(chan delivered, 4)}
		link, err := agentlink.New(agentlink.Config{
			BoardURL: bts[i%boards].URL,
			Token:    tokens[i],
			Identity: agentlink.Identity{Name: a.name},
			OnState: func(s agentlink.State) {
				if s.Up {
					up.Add(1)
				} else {
					up.Add(-1)
				}
			},
			OnDecision: func(d agentlink.Decision) {
				select {
				case a.delivered <- delivered{d: d, at: time.Now()}:
				default:
					a.extra.Add(1)
				}
			},
		})
		if err != nil {
			tb.Fatal(err)
		}
		a.link = link
		al.agents = append(al.agents, a)
		links.Go(func() { _ = link.Run(linkCtx) })
		time.Sleep(2 * time.Millisecond) // 500 dials a second, as BenchmarkLinks
	}
	within := 30*time.Second + time.Duration(n)*10*time.Millisecond
	boardtest.Eventually(tb, within, fmt.Sprintf("%d agents linked", n), func() bool { return up.Load() == int64(n) })
	al.linking = time.Since(start)
	return al
}

func agentName(i int) string { return fmt.Sprintf("agent-%05d", i+1) }

// approvalResult is what one run of approvals measured.
type approvalResult struct {
	Concurrency, Agents, Approvals int
	// Wall: from the first raise to the last delivery.
	Wall time.Duration
	// PerSecond: Approvals / Wall.
	PerSecond float64
	// Raise: Link.Raise until its answer. Decide: the operator's Decide
	// until its answer. DecideToDelivered: the Decide sent until the
	// agent's OnDecision. RaiseToDelivered: Link.Raise called until the
	// agent's OnDecision.
	Raise, Decide, DecideToDelivered, RaiseToDelivered linkload.RTT
}

type approvalTimes struct {
	raise, decide, decideToDelivered, raiseToDelivered time.Duration
}

// run has conc workers take approvals to do from the channel feed fills,
// until feed returns, and sums up their times. Worker w decides as
// operator w and raises as agents w, w+conc, w+2·conc, …, one approval at a
// time, so no agent ever has two in flight.
func (al *approvalLoad) run(tb testing.TB, conc int, feed func(chan<- struct{})) approvalResult {
	tb.Helper()
	work := make(chan struct{})
	times := make([][]approvalTimes, conc)
	errs := make([]error, conc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			next := w
			for range work {
				if errs[w] != nil {
					continue // drain, so feed does not block
				}
				// Decided on the board after the agent's: with several
				// boards, every decision crosses to another.
				op := al.operators[w][(next%al.boards+1)%al.boards]
				t, err := al.one(ctx, al.agents[next], op)
				if err != nil {
					errs[w] = err
					continue
				}
				times[w] = append(times[w], t)
				if next += conc; next >= len(al.agents) {
					next = w
				}
			}
		})
	}
	feed(work)
	close(work)
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	for _, a := range al.agents {
		if n := a.extra.Load(); n != 0 {
			tb.Fatalf("%s: %d decisions delivered that nobody waited for", a.name, n)
		}
	}
	all := slices.Concat(times...)
	pick := func(f func(approvalTimes) time.Duration) linkload.RTT {
		s := make([]time.Duration, len(all))
		for i, t := range all {
			s[i] = f(t)
		}
		return linkload.Summarize(s)
	}
	return approvalResult{
		Concurrency:       conc,
		Agents:            len(al.agents),
		Approvals:         len(all),
		Wall:              wall,
		PerSecond:         float64(len(all)) / wall.Seconds(),
		Raise:             pick(func(t approvalTimes) time.Duration { return t.raise }),
		Decide:            pick(func(t approvalTimes) time.Duration { return t.decide }),
		DecideToDelivered: pick(func(t approvalTimes) time.Duration { return t.decideToDelivered }),
		RaiseToDelivered:  pick(func(t approvalTimes) time.Duration { return t.raiseToDelivered }),
	}
}

// one is one approval: a raises, op decides yes with the raise's digest,
// and a's OnDecision receives the decision.
func (al *approvalLoad) one(ctx context.Context, a *raiser, op boardv1connect.ApprovalServiceClient) (approvalTimes, error) {
	seq := al.seq.Add(1)
	show := map[string]any{"amount": seq, "currency": "EUR"}
	account := "the order arrived broken"
	digest, err := approvals.Digest(show, account)
	if err != nil {
		return approvalTimes{}, err
	}
	run := fmt.Sprintf("run-%08d", seq)

	t0 := time.Now()
	raised, err := a.link.Raise(ctx, agentlink.Raise{
		Run: run, Thread: "t-" + run, Node: "pay", Ask: fmt.Sprintf("Refund %d EUR?", seq),
		Show: show, Account: account, Digest: digest,
	})
	if err != nil {
		return approvalTimes{}, fmt.Errorf("%s: %w", a.name, err)
	}
	if raised.State != board.StatePending {
		return approvalTimes{}, fmt.Errorf("%s: raise %s: state %q, want %q", a.name, run, raised.State, board.StatePending)
	}
	t1 := time.Now()
	if _, err := op.Decide(ctx, &boardv1.DecideRequest{Id: raised.ApprovalID, Say: boardv1.Say_SAY_YES, Digest: digest}); err != nil {
		return approvalTimes{}, fmt.Errorf("decide %s: %w", raised.ApprovalID, err)
	}
	t2 := time.Now()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	var got delivered
	select {
	case got = <-a.delivered:
	case <-timer.C:
		return approvalTimes{}, fmt.Errorf("%s: decision on %s not delivered within 30s", a.name, raised.ApprovalID)
	}
	d := got.d
	if d.ApprovalID != raised.ApprovalID || d.Say != "yes" || d.Run != run || !approvals.StillTheSameThing(d.Digest, digest) {
		return approvalTimes{}, fmt.Errorf("%s: delivered %+v, want yes on %s (run %s) for digest %s", a.name, d, raised.ApprovalID, run, digest)
	}
	return approvalTimes{
		raise:             t1.Sub(t0),
		decide:            t2.Sub(t1),
		decideToDelivered: got.at.Sub(t1),
		raiseToDelivered:  got.at.Sub(t0),
	}, nil
}

func logApprovals(tb testing.TB, r approvalResult) {
	tb.Helper()
	tb.Logf("%d agents linked, %d at a time: %d approvals in %s = %.0f approvals/s",
		r.Agents, r.Concurrency, r.Approvals, r.Wall.Round(time.Millisecond), r.PerSecond)
	for _, s := range []struct {
		name string
		rtt  linkload.RTT
	}{
		{"raise → delivered ", r.RaiseToDelivered},
		{"decide → delivered", r.DecideToDelivered},
		{"raise (answered)  ", r.Raise},
		{"decide (answered) ", r.Decide},
	} {
		tb.Logf("%s p50 %s, p99 %s, max %s", s.name, s.rtt.P50.Round(10*time.Microsecond),
			s.rtt.P99.Round(10*time.Microsecond), s.rtt.Max.Round(10*time.Microsecond))
	}
}
