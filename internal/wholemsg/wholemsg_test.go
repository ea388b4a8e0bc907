package wholemsg_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/wholemsg"
)

// TestOneFramePerMessage links to a real connect server over h2c, pings it
// and reads back every byte the server read: with Transport each message
// of the stream is one DATA frame holding the whole message; without it,
// as connect and Go's transport are, two.
func TestOneFramePerMessage(t *testing.T) {
	const pings = 20
	for _, tc := range []struct {
		name  string
		wrap  bool
		perMs int
	}{
		{"whole", true, 1},
		{"as-is", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, read := serve(t)
			var rt http.RoundTripper = h2c()
			if tc.wrap {
				rt = wholemsg.Transport(rt)
			}
			client := boardv1connect.NewAgentLinkServiceClient(connect.NewClient(
				connecthttp.NewTransport(&http.Client{Transport: rt}, url)))
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			stream, err := client.Link(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var sent []int // each message's size on the wire, prefix included
			send := func(m *boardv1.LinkRequest) {
				t.Helper()
				if err := stream.Send(m); err != nil {
					t.Fatal(err)
				}
				b, _ := proto.Marshal(m) // the size only
				sent = append(sent, 5+len(b))
			}
			send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{Name: "a", Protocol: "1"}}})
			if _, err := stream.Receive(); err != nil {
				t.Fatal(err)
			}
			for i := range pings {
				send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: uint64(i + 1)}}})
				m, err := stream.Receive()
				if err != nil {
					t.Fatal(err)
				}
				if got := m.GetPong().GetSeq(); got != uint64(i+1) {
					t.Fatalf("pong %d, want %d", got, i+1)
				}
			}
			if err := stream.Close(); err != nil {
				t.Fatal(err)
			}

			frames := dataFrames(t, read())
			if len(frames) != tc.perMs*len(sent) {
				t.Fatalf("%d messages crossed in %d DATA frames %v, want %d a message", len(sent), len(frames), frames, tc.perMs)
			}
			if tc.perMs == 1 {
				for i, n := range sent {
					if frames[i] != n {
						t.Fatalf("frame %d holds %d bytes, want the whole message's %d", i, frames[i], n)
					}
				}
			}
		})
	}
}

// TestBodyReads reads enveloped messages through Transport with readers
// of every size down to one byte, whole, split and at the end of the body,
// and gets back exactly the bytes sent.
func TestBodyReads(t *testing.T) {
	var stream bytes.Buffer
	for _, size := range []int{0, 1, 4, 5, 6, 300, 70_000} {
		stream.Write([]byte{0, byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)})
		stream.Write(bytes.Repeat([]byte{byte(size)}, size))
	}
	want := stream.Bytes()
	for _, bufSize := range []int{1, 2, 5, 7, 512, 16_384, 1 << 20} {
		got := roundTripBody(t, io.NopCloser(bytes.NewReader(want)), bufSize)
		if !bytes.Equal(got.data, want) || got.err != nil {
			t.Fatalf("reads of %d: %d bytes (err %v), want %d", bufSize, len(got.data), got.err, len(want))
		}
	}
	// A body that ends inside a message is an error, not a short message.
	for _, cut := range []int{3, 5 + 100} {
		got := roundTripBody(t, io.NopCloser(bytes.NewReader(want[:len(want)-70_005+cut])), 512)
		if !errors.Is(got.err, io.ErrUnexpectedEOF) {
			t.Fatalf("a body cut %d bytes into its last message: err %v, want io.ErrUnexpectedEOF", cut, got.err)
		}
	}
	// A unary request is not enveloped, and goes untouched.
	var seen io.ReadCloser
	rt := wholemsg.Transport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Body
		return nil, errors.New("done")
	}))
	body := io.NopCloser(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0xff}))
	req, _ := http.NewRequest(http.MethodPost, "http://x/", body)
	req.Header.Set("Content-Type", "application/proto")
	_, _ = rt.RoundTrip(req)
	if seen != body {
		t.Fatal("a unary request's body was wrapped")
	}
}

type readResult struct {
	data []byte
	err  error
}

// roundTripBody sends body as a connect stream's through Transport and
// returns what the transport underneath read of it, bufSize at a time.
func roundTripBody(t *testing.T, body io.ReadCloser, bufSize int) readResult {
	t.Helper()
	var res readResult
	rt := wholemsg.Transport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		buf := make([]byte, bufSize)
		for {
			n, err := r.Body.Read(buf)
			res.data = append(res.data, buf[:n]...)
			if err == io.EOF {
				return nil, errors.New("done")
			}
			if err != nil {
				res.err = err
				return nil, err
			}
		}
	}))
	req, err := http.NewRequest(http.MethodPost, "http://x/", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/connect+proto")
	_, _ = rt.RoundTrip(req)
	return res
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// echo welcomes a hello and answers each ping.
type echo struct{}

func (echo) Link(ctx context.Context, s boardv1connect.AgentLinkServiceLinkServerStream) error {
	for {
		m, err := s.Receive()
		if err != nil {
			return nil
		}
		var out *boardv1.LinkResponse
		switch {
		case m.GetHello() != nil:
			out = &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{Session: "1"}}}
		case m.GetPing() != nil:
			out = &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{Seq: m.GetPing().GetSeq()}}}
		default:
			continue
		}
		if err := s.Send(out); err != nil {
			return nil
		}
	}
}

// serve serves echo over h2c on loopback, and returns its URL and a
// function giving every byte the server has read from its connections.
func serve(t *testing.T) (string, func() []byte) {
	srv := connect.NewServer()
	boardv1connect.RegisterAgentLinkServiceHandler(srv, echo{})
	mux := http.NewServeMux()
	connecthttp.Mount(mux, srv)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: mux, Protocols: p}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	go func() { _ = hs.Serve(&recordingListener{Listener: ln, rec: rec}) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String(), rec.bytes
}

func h2c() *http.Transport {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: p}
}

// dataFrames parses what a server read on its one connection and returns
// the sizes of the DATA frames with something in them, in order.
func dataFrames(t *testing.T, b []byte) []int {
	t.Helper()
	if !bytes.HasPrefix(b, []byte(http2.ClientPreface)) {
		t.Fatalf("the server read %q first, not HTTP/2's preface", b[:min(len(b), 24)])
	}
	fr := http2.NewFramer(io.Discard, bytes.NewReader(b[len(http2.ClientPreface):]))
	fr.MaxHeaderListSize = 1 << 20
	var sizes []int
	for {
		f, err := fr.ReadFrame()
		if err == io.EOF {
			return sizes
		}
		if err != nil {
			t.Fatalf("parsing what the server read: %v", err)
		}
		if d, ok := f.(*http2.DataFrame); ok && len(d.Data()) > 0 {
			sizes = append(sizes, len(d.Data()))
		}
	}
}

type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) bytes() []byte {
	// The server may still be reading the stream's end; give it a moment.
	time.Sleep(50 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

type recordingListener struct {
	net.Listener
	rec *recorder
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, rec: l.rec}, nil
}

type recordingConn struct {
	net.Conn
	rec *recorder
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.rec.mu.Lock()
	c.rec.buf.Write(p[:n])
	c.rec.mu.Unlock()
	return n, err
}
