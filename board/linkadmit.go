package board

import (
	"errors"
	"math/rand/v2"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connectproto"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	// DefaultLinksPerSecond is Config.LinksPerSecond's default: the rate
	// the board plans to admit a redialling fleet at (presence.go).
	DefaultLinksPerSecond = admitPerSecond
	// DefaultLinkMaxAge is Config.LinkMaxAge's default.
	DefaultLinkMaxAge = time.Hour
)

// errAgeLimit ends a link that reached its age (Config.LinkMaxAge).
var errAgeLimit = errors.New("the link reached the board's age limit")

// admitLink takes one new link from the board's rate, or refuses it
// unavailable, with a hint of when to try again (a google.rpc.RetryInfo
// detail): the time the board needs for the links it is being asked for
// now, at least a second. The refusal costs nothing: no hello is read, no
// store touched.
func (b *Board) admitLink() error {
	if b.linkAdmit.Allow() {
		return nil
	}
	b.metrics.linkRefused()
	hint := max(time.Second, b.presence.redialWithin())
	return withRetryHint(connect.Errorf(connect.CodeUnavailable,
		"the board takes at most %g new links a second: link again in %s, or to another board", b.cfg.LinksPerSecond, hint), hint)
}

// withRetryHint adds to err the wait its client should keep before trying
// again.
func withRetryHint(err *connect.Error, after time.Duration) *connect.Error {
	d, derr := connectproto.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(after)})
	if derr != nil {
		return err
	}
	return err.WithDetail(d)
}

// linkAge is how long one link may last: between 90% and 100% of
// Config.LinkMaxAge, so that links made at one moment do not all end at
// one moment; zero for none.
func (b *Board) linkAge() time.Duration {
	if b.cfg.LinkMaxAge < 0 {
		return 0
	}
	tenth := b.cfg.LinkMaxAge / 10
	return b.cfg.LinkMaxAge - tenth + time.Duration(rand.Int64N(int64(tenth)+1))
}
