package linkload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
)

// bareLink is the least a link service can be: it welcomes every hello
// (saying it reads what a board does), answers every ping and says every
// run summary is stored, as a board does, and does nothing else — no token
// checked, nothing kept, every other message dropped. A storm or a fleet's
// runs against it measure what the machine, Go's HTTP/2 and connect, and
// the agents' side cost without the board.
type bareLink struct {
	ping     time.Duration
	live     atomic.Int64
	sessions atomic.Int64
	stored   atomic.Int64 // run summaries answered as stored
}

func (l *bareLink) Link(ctx context.Context, s boardv1connect.AgentLinkServiceLinkServerStream) error {
	first, err := s.Receive()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return connect.NewError(connect.CodeInvalidArgument, "the first message is not a hello")
	}
	n := l.live.Add(1)
	defer l.live.Add(-1)
	err = s.Send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{
		Session:      strconv.FormatInt(l.sessions.Add(1), 10),
		Protocol:     hello.GetProtocol(),
		MinProtocol:  board.MinProtocol,
		MaxProtocol:  board.Protocol,
		PingInterval: durationpb.New(l.ping),
		PingTimeout:  durationpb.New(10 * time.Second),
		RedialWithin: durationpb.New(board.RedialWindow(n)),
		Accepts:      board.Accepts(),
	}}})
	if err != nil {
		return err
	}
	for {
		m, err := s.Receive()
		if err != nil {
			return nil
		}
		var out *boardv1.LinkResponse
		switch k := m.GetKind().(type) {
		case *boardv1.LinkRequest_Ping:
			out = &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{
				Seq:          k.Ping.GetSeq(),
				SendTime:     k.Ping.GetSendTime(),
				RedialWithin: durationpb.New(board.RedialWindow(l.live.Load())),
			}}}
		case *boardv1.LinkRequest_RunSummary:
			l.stored.Add(1)
			out = &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_RunStored{RunStored: &boardv1.RunStored{
				RunId: k.RunSummary.GetRun().GetId(), Seq: k.RunSummary.GetSeq(),
			}}}
		default:
			continue
		}
		if err := s.Send(out); err != nil {
			return nil
		}
	}
}

// serve serves l over h2c on ln until shutdown is called; served yields
// the error that stopped it serving before that.
func (l *bareLink) serve(ln net.Listener) (shutdown func(context.Context) error, served <-chan error) {
	srv := connect.NewServer()
	boardv1connect.RegisterAgentLinkServiceHandler(srv, l)
	mux := http.NewServeMux()
	connecthttp.Mount(mux, srv)
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: mux, Protocols: protocols}
	errs := make(chan error, 1)
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	}()
	return hs.Shutdown, errs
}

// bareChild is BoardChild with EnvBare set: it serves a bareLink on addr
// over h2c, writes a "listening" Event, and answers cmdCount and
// cmdCountHere with the links it holds, and cmdStopProfile, until stdin
// ends.
func bareChild(ctx context.Context, addr string, ping time.Duration, stdin io.Reader, stdout io.Writer) error {
	stopProfile, err := startProfile(os.Getenv(EnvCPUProfile))
	if err != nil {
		return err
	}
	defer stopProfile()
	l := &bareLink{ping: ping}
	ln, err := listenAgain(addr)
	if err != nil {
		return err
	}
	shutdown, served := l.serve(ln)
	out := &events{enc: json.NewEncoder(stdout)}
	go func() { out.send(Event{Kind: "error", Error: (<-served).Error()}) }()
	out.send(Event{Kind: "listening", At: time.Now().UnixNano()})

	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		switch cmd := sc.Text(); cmd {
		case cmdCount, cmdCountHere:
			out.send(Event{Kind: "count", Up: int(l.live.Load())})
		case cmdStopProfile:
			pprof.StopCPUProfile()
			out.send(Event{Kind: "profiled"})
		default:
			out.send(Event{Kind: "error", Error: fmt.Sprintf("unknown command %q", cmd)})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return shutdown(ctx)
}
