package store

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unreachable reports whether err says the store could not be reached —
// a connection refused, dropped or timed out — rather than that a
// statement failed: what a board cut off from its store sees.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	var connect *pgconn.ConnectError
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &op) || errors.As(err, &connect) ||
		errors.Is(err, io.ErrUnexpectedEOF) || pgconn.Timeout(err)
}
