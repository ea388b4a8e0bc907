package linkload

import (
	"context"
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/pump"
	"github.com/symphonix/symphonix/internal/wholemsg"
)

// loadBuild is the build every agent of the load says it runs, as a real
// agent's hello does: the board records it on each hello.
const loadBuild = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// probeTimeout is how long a probe waits for a welcome or a pong.
const probeTimeout = 10 * time.Second

// probe is an agent that is a raw client of the generated API rather than
// an agentlink.Link, because agentlink does not say how long its pings
// took. It says the same hello as agentlink, pings every interval with one
// ping in flight, and times each ping until its pong with the monotonic
// clock.
//
// A bare agent (Plan.BareAgents) is a probe that keeps no round trips and
// redials as agentlink does: the least an agent's link can cost.
type probe struct {
	url   string
	tls   *tls.Config // nil for h2c
	cred  Credential
	every time.Duration
	rec   *recorder // nil: round trips not kept
	up    *atomic.Int64
	// bare: redial as agentlink does, and say each link going up and down
	// to state.
	bare  bool
	state func(up bool)
	said  *refusals
	// window: the redial window the board last gave.
	window time.Duration
}

// run keeps the probe linked until ctx ends, and counts in drops each link
// that ended after its welcome.
func (p *probe) run(ctx context.Context, drops *atomic.Int64) {
	attempt := 0
	for {
		wasUp, err := p.once(ctx)
		if ctx.Err() != nil {
			return
		}
		if wasUp {
			drops.Add(1)
			attempt = 0
		}
		if p.said != nil {
			p.said.count(err)
		}
		wait := 100 * time.Millisecond
		if p.bare {
			wait = agentlink.Backoff(attempt, agentlink.DefaultMinBackoff, agentlink.DefaultMaxBackoff, rand.Float64())
			if wasUp && p.window > 0 {
				wait = agentlink.FirstRedial(p.window, rand.Float64())
			}
		}
		attempt++
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// linked counts the probe's link going up or down.
func (p *probe) linked(up bool) {
	if up {
		p.up.Add(1)
	} else {
		p.up.Add(-1)
	}
	if p.state != nil {
		p.state(up)
	}
}

// once links the probe once and pings until the link ends. wasUp reports
// whether the board welcomed it.
func (p *probe) once(ctx context.Context) (wasUp bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h2 := new(http.Protocols)
	if p.tls != nil {
		h2.SetHTTP2(true)
	} else {
		h2.SetUnencryptedHTTP2(true)
	}
	tr := &http.Transport{Protocols: h2, TLSClientConfig: p.tls}
	defer tr.CloseIdleConnections()
	client := boardv1connect.NewAgentLinkServiceClient(connect.NewClient(
		connecthttp.NewTransport(&http.Client{Transport: wholemsg.Transport(tr)}, p.url), // as agentlink
	))
	ctx, info := connect.NewClientContext(ctx)
	info.RequestHeader().Set("Authorization", "Bearer "+p.cred.Token)
	stream, err := client.Link(ctx)
	if err != nil {
		return false, err
	}
	defer stream.Close()
	err = stream.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name:     p.cred.Name,
		Protocol: agentlink.Protocol,
		Build:    loadBuild,
	}}})
	if err != nil {
		return false, err
	}

	// The receiver ends when the stream fails, at the latest when once
	// returns and cancels ctx.
	in := pump.Receive(ctx, stream.Receive)
	every := p.every

	wait := time.NewTimer(probeTimeout)
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-wait.C:
		return false, errors.New("no welcome")
	case r, ok := <-in:
		if !ok {
			return false, ctx.Err()
		}
		if r.Err != nil {
			return false, r.Err
		}
		w := r.Msg.GetWelcome()
		if w == nil {
			return false, errors.New("first message is not a welcome")
		}
		p.window = w.GetRedialWithin().AsDuration()
		if d := w.GetPingInterval().AsDuration(); p.bare && d > 0 {
			every = d // as agentlink does
		}
	}
	p.linked(true)
	defer p.linked(false)

	tick := time.NewTicker(every)
	defer tick.Stop()
	var (
		seq      uint64
		awaiting uint64 // the seq of the ping in flight, or 0
		sent     time.Time
	)
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-tick.C:
			if awaiting != 0 {
				if time.Since(sent) > probeTimeout {
					return true, errors.New("no pong")
				}
				continue
			}
			seq++
			awaiting, sent = seq, time.Now()
			err := stream.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{
				Seq: seq, SendTime: timestamppb.New(sent),
			}}})
			if err != nil {
				return true, err
			}
		case r, ok := <-in:
			if !ok {
				return true, ctx.Err()
			}
			if r.Err != nil {
				return true, r.Err
			}
			switch k := r.Msg.GetKind().(type) {
			case *boardv1.LinkResponse_Pong:
				if k.Pong.GetSeq() == awaiting && awaiting != 0 {
					if p.rec != nil {
						p.rec.add(time.Since(sent))
					}
					awaiting = 0
				}
				if w := k.Pong.GetRedialWithin(); w != nil {
					p.window = w.AsDuration()
				}
			case *boardv1.LinkResponse_Ping:
				err := stream.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pong{Pong: &boardv1.Pong{
					Seq: k.Ping.GetSeq(), SendTime: k.Ping.GetSendTime(),
				}}})
				if err != nil {
					return true, err
				}
			}
		}
	}
}
