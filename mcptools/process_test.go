package mcptools

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// liveOf is the server's live instance, after a call has started it.
func liveOf(t *testing.T, s *Set, server string) *instance {
	t.Helper()
	p := s.servers[server]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == nil {
		t.Fatalf("server %s has no live process", server)
	}
	return p.live
}

func lookup(t *testing.T, s *Set, id string) (map[string]any, error) {
	t.Helper()
	v, err := s.Call(t.Context(), "orders.lookup_order", map[string]any{"order_id": id})
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("lookup_order returned %T, want map[string]any", v)
	}
	return m, nil
}

func TestRestartAfterTheProcessDies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		noticed bool // wait until the Set has seen the exit before calling
	}{
		{"noticed", true},
		{"not yet noticed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, log := openOrders(t)
			if _, err := s.Call(t.Context(), "orders.refund", map[string]any{"order_id": "A-1001", "amount": 10, "reason": "late"}); err != nil {
				t.Fatalf("refund: %v", err)
			}
			old := liveOf(t, s, "orders")
			if err := old.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if tt.noticed {
				<-old.done
			}
			// The call that finds the process dead may fail with that error;
			// the one after it runs on a new process.
			got, err := lookup(t, s, "A-1001")
			if err != nil {
				if tt.noticed {
					t.Fatalf("lookup after a noticed exit: %v", err)
				}
				if got, err = lookup(t, s, "A-1001"); err != nil {
					t.Fatalf("second lookup after the exit: %v", err)
				}
			}
			if got["status"] != "refunded" {
				t.Errorf("after restart, A-1001 status = %v, want refunded (kept in ORDERS_STATE)", got["status"])
			}
			if now := liveOf(t, s, "orders"); now == old || now.cmd.Process.Pid == old.cmd.Process.Pid {
				t.Errorf("still on pid %d, want a new process", old.cmd.Process.Pid)
			}
			if n := log.starts(); n != 2 {
				t.Errorf("server started %d times, want 2", n)
			}
		})
	}
}

func TestCloseEndsProcesses(t *testing.T) {
	t.Parallel()
	dir, servers := ordersFlow(t)
	servers["second"] = servers["orders"]
	s, err := Open(t.Context(), dir, servers, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, name := range []string{"orders.lookup_order", "second.lookup_order"} {
		if _, err := s.Call(t.Context(), name, map[string]any{"order_id": "A-1002"}); err != nil {
			t.Fatalf("Call(%s): %v", name, err)
		}
	}
	for _, server := range []string{"orders", "second"} {
		pids = append(pids, liveOf(t, s, server).cmd.Process.Pid)
	}
	began := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(began); took >= grace {
		t.Errorf("Close took %v: the servers did not exit when their stdin closed", took)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("after Close, kill(%d, 0) = %v, want ESRCH (no such process)", pid, err)
		}
	}
	if _, err := s.Call(t.Context(), "orders.lookup_order", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	if _, err := s.ListTools(t.Context(), "orders"); !errors.Is(err, ErrClosed) {
		t.Errorf("ListTools after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

func TestEnviron(t *testing.T) {
	t.Parallel()
	parent := []string{"PATH=/usr/bin:/bin", "HOME=/home/agent", "OPENAI_API_KEY=sk-secret", "BOARD_TOKEN=t", "PATHX=no"}
	tests := []struct {
		name     string
		declared map[string]string
		want     []string
	}{
		{"nothing declared", nil, []string{"HOME=/home/agent", "PATH=/usr/bin:/bin"}},
		{"declared added", map[string]string{"ORDERS_STATE": "orders.json"},
			[]string{"HOME=/home/agent", "ORDERS_STATE=orders.json", "PATH=/usr/bin:/bin"}},
		{"declared wins", map[string]string{"HOME": "/srv/orders"},
			[]string{"HOME=/srv/orders", "PATH=/usr/bin:/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, environ(parent, tt.declared)); diff != "" {
				t.Errorf("environ(%v) mismatch (-want +got):\n%s", tt.declared, diff)
			}
		})
	}
}
