package board_test

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
)

// countMessages forwards TCP connections to target and returns the URL to
// dial for it, and a channel that receives once for each message a client
// sends: each Connect or gRPC envelope in the HTTP/2 DATA frames of a
// connection with one stream, as an agent's link is.
func countMessages(t *testing.T, target string) (url string, messages <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1024)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go func() {
				_, _ = io.Copy(c, s)
				c.Close()
			}()
			go func() {
				forwardMessages(c, s, ch)
				s.Close()
			}()
		}
	}()
	return "http://" + ln.Addr().String(), ch
}

// forwardMessages copies an h2c client's connection preface and frames
// from c to s until either fails, and sends on messages for each whole
// envelope (a flag byte, a 4-byte big-endian length, the message) the DATA
// frames carry. It never blocks on messages.
func forwardMessages(c, s net.Conn, messages chan<- struct{}) {
	const (
		preface    = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" // RFC 9113, section 3.4
		frameData  = 0x0
		flagPadded = 0x8
	)
	r := io.TeeReader(c, s)
	if _, err := io.CopyN(io.Discard, r, int64(len(preface))); err != nil {
		return
	}
	var data []byte // what the DATA frames carried, not yet a whole envelope
	for {
		var h [9]byte // length (3 bytes), type, flags, stream: RFC 9113, section 4.1
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		payload := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
		if _, err := io.ReadFull(r, payload); err != nil {
			return
		}
		if h[3] != frameData {
			continue
		}
		if h[4]&flagPadded != 0 && len(payload) > 0 {
			pad := int(payload[0])
			payload = payload[1 : len(payload)-pad]
		}
		data = append(data, payload...)
		for len(data) >= 5 {
			n := 5 + int(binary.BigEndian.Uint32(data[1:5]))
			if len(data) < n {
				break
			}
			data = data[n:]
			select {
			case messages <- struct{}{}:
			default:
			}
		}
	}
}
