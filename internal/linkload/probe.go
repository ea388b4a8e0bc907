package linkload

import (
	"context"
	"crypto/tls"
	"errors"
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
type probe struct {
	url   string
	tls   *tls.Config // nil for h2c
	cred  Credential
	every time.Duration
	rec   *recorder
	up    *atomic.Int64
}

// run keeps the probe linked until ctx ends, and counts in drops each link
// that ended after its welcome.
func (p *probe) run(ctx context.Context, drops *atomic.Int64) {
	for {
		wasUp, _ := p.once(ctx) // that it ended matters here, not why
		if ctx.Err() != nil {
			return
		}
		if wasUp {
			drops.Add(1)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
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
		connecthttp.NewTransport(&http.Client{Transport: tr}, p.url),
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
		if r.Msg.GetWelcome() == nil {
			return false, errors.New("first message is not a welcome")
		}
	}
	p.up.Add(1)
	defer p.up.Add(-1)

	tick := time.NewTicker(p.every)
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
					p.rec.add(time.Since(sent))
					awaiting = 0
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
