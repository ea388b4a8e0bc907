package board

import (
	"net/http"

	"connectrpc.com/connect/v2"
)

// hashSlots bounds how many argon2id hashes the board runs at once
// (passwords at sign-in and setup, verify secrets): each takes 19 MiB and a
// core for tens of milliseconds, so unbounded they let anyone who can reach
// /auth/* take the board's memory. A request that finds every slot taken is
// answered busy at once, never queued: a queue would hold the requests, and
// their bodies, instead.
type hashSlots chan struct{}

func newHashSlots(n int) hashSlots { return make(hashSlots, n) }

// try takes a slot if one is free; release gives it back.
func (h hashSlots) try() (release func(), ok bool) {
	select {
	case h <- struct{}{}:
		return func() { <-h }, true
	default:
		return nil, false
	}
}

// hashBusy is what a request that found no free slot is told.
const hashBusy = "the board is busy checking passwords: try again in a second"

// writeHashBusy answers an HTTP request that found no free slot: 503,
// with Retry-After.
func writeHashBusy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeAuthError(w, http.StatusServiceUnavailable, hashBusy)
}

// errHashBusy answers an RPC that found no free slot.
var errHashBusy = connect.NewError(connect.CodeUnavailable, hashBusy)
