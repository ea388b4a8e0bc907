package board_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestH2CListenerServesHTTP1: the listener that sends h2c connections to the
// HTTP/2 server still gives everything else to HTTP/1, including a request
// shorter than the HTTP/2 preface, and one that starts like it but is not.
func TestH2CListenerServesHTTP1(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	for name, req := range map[string]string{
		"short request":      "GET / HTTP/1.0\r\n\r\n",
		"jwks":               "GET /.well-known/jwks.json HTTP/1.0\r\n\r\n",
		"preface look-alike": "PRI / HTTP/1.0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := net.DialTimeout("tcp", bt.Addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			status, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || !strings.HasPrefix(status, "HTTP/1.") {
				t.Fatalf("%q: status line %q, %v; want an HTTP/1 answer", req, status, err)
			}
		})
	}
}
