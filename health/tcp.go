package health

import (
	"context"
	"net"
)

// tcpCheck opens a TCP connection to addr and closes it.
func tcpCheck(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}
