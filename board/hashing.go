package board

import (
	"net/http"

	"golang.org/x/time/rate"

	"connectrpc.com/connect/v2"
)

// hashSlots bounds how many argon2id hashes the board runs at once, and
// how many it starts a second (passwords at sign-in and setup, verify
// secrets): each takes 19 MiB and a core for tens of milliseconds, so
// unbounded they let anyone who can reach /auth/* take the board's memory,
// and a flood that kept even one core hashing would slow every operator's
// call. A request that finds every slot taken, or the second's hashes
// started, is answered busy at once, never queued: a queue would hold the
// requests, and their bodies, instead.
type hashSlots struct {
	slots chan struct{}
	rate  *rate.Limiter
}

// newHashSlots runs at most n hashes at once, and starts at most
// perSecond a second, with bursts of up to twice that.
func newHashSlots(n int, perSecond float64) hashSlots {
	return hashSlots{slots: make(chan struct{}, n), rate: rate.NewLimiter(rate.Limit(perSecond), max(1, int(2*perSecond)))}
}

// try takes a slot if one is free and the board-wide rate allows another
// hash now; release gives the slot back.
func (h hashSlots) try() (release func(), ok bool) {
	select {
	case h.slots <- struct{}{}:
	default:
		return nil, false
	}
	if !h.rate.Allow() {
		<-h.slots
		return nil, false
	}
	return func() { <-h.slots }, true
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
