package linkload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// bareLink is the least a link service can be: it welcomes every hello and
// answers every ping, as a board does, and does nothing else — no token
// checked, nothing stored. A storm against it measures what the machine,
// Go's HTTP/2 and connect, and the agents' side cost without the board.
type bareLink struct {
	ping     time.Duration
	live     atomic.Int64
	sessions atomic.Int64
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
	}}})
	if err != nil {
		return err
	}
	for {
		m, err := s.Receive()
		if err != nil {
			return nil
		}
		if p := m.GetPing(); p != nil {
			err := s.Send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{
				Seq:          p.GetSeq(),
				SendTime:     p.GetSendTime(),
				RedialWithin: durationpb.New(board.RedialWindow(l.live.Load())),
			}}})
			if err != nil {
				return nil
			}
		}
	}
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
	srv := connect.NewServer()
	boardv1connect.RegisterAgentLinkServiceHandler(srv, l)
	mux := http.NewServeMux()
	connecthttp.Mount(mux, srv)
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: mux, Protocols: protocols}
	ln, err := listenAgain(addr)
	if err != nil {
		return err
	}
	out := &events{enc: json.NewEncoder(stdout)}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			out.send(Event{Kind: "error", Error: err.Error()})
		}
	}()
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
	return hs.Shutdown(ctx)
}
