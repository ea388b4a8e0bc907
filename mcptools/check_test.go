package mcptools

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCheck: a check starts a server that is not running and passes; a
// process killed fails the next check, saying how it ended; the check
// after starts it again and passes. A server the flow does not declare
// fails.
func TestCheck(t *testing.T) {
	t.Parallel()
	for _, noticed := range []bool{true, false} {
		s, log := openOrders(t)
		if err := s.Check(t.Context(), "orders", 0); err != nil {
			t.Fatalf("Check of a server not yet started = %v, want it started and passing", err)
		}
		if n := log.starts(); n != 1 {
			t.Fatalf("server started %d times, want once", n)
		}
		if err := s.Check(t.Context(), "orders", 0); err != nil {
			t.Fatalf("a second Check = %v", err)
		}
		old := liveOf(t, s, "orders")
		if err := old.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if noticed {
			<-old.done
		}
		err := s.Check(t.Context(), "orders", 5*time.Second)
		switch {
		case err == nil:
			t.Fatalf("Check after the process was killed (noticed %v) = nil, want an error", noticed)
		case noticed && (!errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "killed")):
			t.Errorf("Check after a noticed kill = %v, want ErrExited saying it was killed", err)
		}
		<-old.done
		if err := s.Check(t.Context(), "orders", 0); err != nil {
			t.Errorf("the Check after the failed one (noticed %v) = %v, want the server started again", noticed, err)
		}
		if n := log.starts(); n != 2 {
			t.Errorf("server started %d times, want twice", n)
		}
	}
	s, _ := openOrders(t)
	if err := s.Check(t.Context(), "payments", 0); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Check of an undeclared server = %v, want ErrUnknownServer", err)
	}
}
