// Package pump holds the one receive loop both ends of the link use.
package pump

import "context"

// Received is one message, or the error that ended the receiving.
type Received[T any] struct {
	Msg T
	Err error
}

// Receive calls recv in a goroutine until it fails, and delivers every
// message, then the error, on the returned channel, which is closed when the
// goroutine ends. It ends early when ctx ends; a caller that stops reading
// must end ctx (and make recv fail, as closing the stream does) so it can.
func Receive[T any](ctx context.Context, recv func() (T, error)) <-chan Received[T] {
	ch := make(chan Received[T], 1)
	go func() {
		defer close(ch)
		for {
			msg, err := recv()
			select {
			case ch <- Received[T]{msg, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}
