package board_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// bodyGrace is the grace the boards here give a body: short, so that a
// trickle is cut off quickly.
const bodyGrace = 300 * time.Millisecond

// trickle writes a byte of body to w every 20 ms until a write fails or
// stop is closed, and then closes done.
func trickle(w io.Writer, stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	return d
}

// TestSlowBodyHTTP1: an HTTP/1 request sending its body a byte at a time
// is answered 408 once it falls behind, and its connection closed, while
// the client is still sending.
func TestSlowBodyHTTP1(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{BodyGrace: bodyGrace})
	for _, path := range []string{"/auth/signin", "/auth/setup"} {
		t.Run(strings.TrimPrefix(path, "/auth/"), func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", bt.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: board\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer close(stop)
			trickle(c, stop)
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second)) // the ceiling
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer to a body sent a byte at a time: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestTimeout || !bytes.Contains(body, []byte("too slow")) {
				t.Errorf("a body sent a byte at a time: %s %s, want 408, too slow", resp.Status, body)
			}
			// Closed: an end of file, or a reset when the board closed
			// with trickled bytes still unread.
			if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("after the 408: %v, want the connection closed", err)
			}
		})
	}
}

// TestSlowBodyHTTP2: an HTTP/2 request, to /auth or an RPC, sending its
// body a byte at a time is cut off: answered, and its stream reset so the
// client's sending fails, while the client would go on.
func TestSlowBodyHTTP2(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[tls], func(t *testing.T) {
			t.Parallel()
			slowBodyHTTP2(t, boardtest.Start(t, boardtest.Options{BodyGrace: bodyGrace, TLS: tls}))
		})
	}
}

func slowBodyHTTP2(t *testing.T, bt *boardtest.Board) {
	token := bt.OperatorToken("ops", identity.RoleViewer)
	for name, tc := range map[string]struct {
		path, auth string
		status     int
		says       string
	}{
		"sign-in": {"/auth/signin", "", http.StatusRequestTimeout, `"body: request body too slow`},
		"rpc":     {"/symphonix.board.v1.AgentService/ListAgents", "Bearer " + token, http.StatusGatewayTimeout, `"code":"deadline_exceeded","message":"request body too slow`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pr, pw := io.Pipe()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // the ceiling
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, bt.URL+tc.path, pr)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			stop := make(chan struct{})
			defer close(stop)
			sent := trickle(pw, stop)
			start := time.Now()
			resp, err := bt.HTTPClient().Do(req)
			if err != nil {
				t.Fatalf("no answer to a body sent a byte at a time: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("served over %s, want HTTP/2", resp.Proto)
			}
			if resp.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.says)) {
				t.Errorf("%s: %s %s, want %d saying %s", tc.path, resp.Status, body, tc.status, tc.says)
			}
			select {
			case <-sent:
			case <-time.After(20 * time.Second):
				t.Fatalf("the client could still send its body after it was answered")
			}
			if took := time.Since(start); took < bodyGrace {
				t.Errorf("cut off after %s, before the grace of %s", took, bodyGrace)
			}
		})
	}
}

// TestStreamsKeepTheirBodies: the link and the watches are not held to a
// body rate: a link and an HTTP/1 watch stay up well past the grace.
func TestStreamsKeepTheirBodies(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{BodyGrace: bodyGrace, WatchHeartbeat: 100 * time.Millisecond})
	t.Run("link", func(t *testing.T) {
		t.Parallel()
		l := openLink(t, bt, "desk")
		for seq := range uint64(20) { // a pong every 50 ms: a second, three graces
			l.ping(seq)
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Run("watch over HTTP/1", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", bt.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		msg := envelope(0, []byte("{}"))
		_, err = io.WriteString(c, "POST /symphonix.board.v1.ApprovalService/WatchApprovals HTTP/1.1\r\nHost: board\r\n"+
			"Content-Type: application/connect+json\r\nConnect-Protocol-Version: 1\r\n"+
			"Authorization: Bearer "+bt.OperatorToken("ops", identity.RoleViewer)+"\r\n"+
			"Content-Length: "+itoa(len(msg))+"\r\n\r\n"+string(msg))
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("watch: %v %v", resp, err)
		}
		start := time.Now()
		heartbeats := 0
		for time.Since(start) < 4*bodyGrace {
			flags, payload := readEnvelope(t, resp.Body)
			if flags&2 != 0 {
				t.Fatalf("the watch ended after %s: %s", time.Since(start), payload)
			}
			var m struct {
				Event string `json:"event"`
			}
			if err := json.Unmarshal(payload, &m); err == nil && m.Event == "APPROVAL_EVENT_HEARTBEAT" {
				heartbeats++
			}
		}
		if heartbeats < 3 {
			t.Errorf("%d heartbeats in %s, want one every 100 ms", heartbeats, 4*bodyGrace)
		}
	})
}

// envelope frames a Connect streaming message.
func envelope(flags byte, payload []byte) []byte {
	out := make([]byte, 5, 5+len(payload))
	out[0] = flags
	binary.BigEndian.PutUint32(out[1:], uint32(len(payload)))
	return append(out, payload...)
}

// readEnvelope reads one Connect streaming message.
func readEnvelope(t *testing.T, r io.Reader) (flags byte, payload []byte) {
	t.Helper()
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		t.Fatalf("read a message: %v", err)
	}
	payload = make([]byte, binary.BigEndian.Uint32(head[1:]))
	if _, err := io.ReadFull(r, payload); err != nil {
		t.Fatalf("read a message: %v", err)
	}
	return head[0], payload
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
