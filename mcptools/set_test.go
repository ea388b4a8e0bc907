package mcptools

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCallLookupOrder(t *testing.T) {
	t.Parallel()
	s, log := openOrders(t)
	got, err := s.Call(t.Context(), "orders.lookup_order", map[string]any{"order_id": "A-1001"})
	if err != nil {
		t.Fatalf("Call(orders.lookup_order): %v", err)
	}
	want := map[string]any{
		"order_id": "A-1001",
		"customer": "Ada Lovelace",
		"amount":   49.9,
		"currency": "EUR",
		"status":   "delivered",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Call(orders.lookup_order) mismatch (-want +got):\n%s", diff)
	}
	logged := log.String()
	if !strings.Contains(logged, `name=orders.lookup_order`) {
		t.Errorf("log has no line for the call:\n%s", logged)
	}
	for _, private := range []string{"A-1001", "Ada", "49.9"} {
		if strings.Contains(logged, private) {
			t.Errorf("log holds %q, an argument or a result:\n%s", private, logged)
		}
	}
}

func TestRefund(t *testing.T) {
	t.Parallel()
	s, log := openOrders(t)
	ctx := t.Context()
	got, err := s.Call(ctx, "orders.refund", map[string]any{"order_id": "A-1001", "amount": 49.90, "reason": "arrived broken"})
	if err != nil {
		t.Fatalf("first refund: %v", err)
	}
	want := map[string]any{"refund_id": "R-0001", "order_id": "A-1001", "amount": 49.9, "status": "refunded"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first refund mismatch (-want +got):\n%s", diff)
	}

	refusals := []struct {
		name string
		args map[string]any
	}{
		{"again", map[string]any{"order_id": "A-1001", "amount": 49.90, "reason": "arrived broken"}},
		{"above the order", map[string]any{"order_id": "A-1002", "amount": 5000.01, "reason": "goodwill"}},
		{"already refunded before", map[string]any{"order_id": "A-1003", "amount": 1, "reason": "twice"}},
		{"unknown order", map[string]any{"order_id": "Z-9", "amount": 1, "reason": "lost"}},
	}
	for _, r := range refusals {
		_, err := s.Call(ctx, "orders.refund", r.args)
		var te *ToolError
		if !errors.As(err, &te) {
			t.Errorf("refund %s: error %v, want a *ToolError", r.name, err)
			continue
		}
		if te.Name != "orders.refund" || te.Text == "" {
			t.Errorf("refund %s: ToolError{Name: %q, Text: %q}, want the tool's name and what it said", r.name, te.Name, te.Text)
		}
		if strings.Contains(log.String(), te.Text) {
			t.Errorf("refund %s: the tool's error text %q was logged", r.name, te.Text)
		}
	}
	if n := log.starts(); n != 1 {
		t.Errorf("server started %d times, want 1", n)
	}
}

func TestCallRefusesBeforeStarting(t *testing.T) {
	t.Parallel()
	s, log := openOrders(t)
	tests := []struct {
		name string
		call string
		want error
	}{
		{"undeclared tool", "orders.cancel_order", ErrUndeclared},
		{"unknown server", "payments.charge", ErrUnknownServer},
		{"no dot", "lookup_order", ErrNoServerName},
		{"no server", ".lookup_order", ErrNoServerName},
		{"no tool", "orders.", ErrNoServerName},
		{"empty", "", ErrNoServerName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Call(t.Context(), tt.call, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Call(%q) = %v, want %v", tt.call, err, tt.want)
			}
			if tt.call != "" && !strings.Contains(err.Error(), tt.call) {
				t.Errorf("Call(%q) = %q, want the name in the message", tt.call, err)
			}
		})
	}
	if n := log.starts(); n != 0 {
		t.Errorf("server started %d times for refused calls, want 0", n)
	}
	if n := len(s.servers["orders"].running); n != 0 {
		t.Errorf("%d processes running after refused calls, want 0", n)
	}
}

// A tool the flow declares but the server does not have is the server's
// refusal, not the tool's: an error, and not a *ToolError.
func TestCallToolTheServerLacks(t *testing.T) {
	t.Parallel()
	dir, servers := ordersFlow(t)
	orders := servers["orders"]
	orders.Tools = append(orders.Tools, Tool{Name: "cancel_order", Description: "Cancel an order."})
	servers["orders"] = orders
	s, err := Open(t.Context(), dir, servers, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Call(t.Context(), "orders.cancel_order", map[string]any{"order_id": "A-1001"})
	var te *ToolError
	if err == nil || errors.As(err, &te) {
		t.Fatalf("Call(orders.cancel_order) = %v, want an error that is not a *ToolError", err)
	}
}

func TestCallServerThatCannotStart(t *testing.T) {
	t.Parallel()
	dir, servers := ordersFlow(t)
	orders := servers["orders"]
	orders.Command = "./bin/no-such-server"
	servers["orders"] = orders
	s, err := Open(t.Context(), dir, servers, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 2 { // each call tries once
		_, err := s.Call(t.Context(), "orders.lookup_order", map[string]any{"order_id": "A-1001"})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("call %d: Call = %v, want fs.ErrNotExist", i, err)
		}
	}
}

func TestListTools(t *testing.T) {
	t.Parallel()
	s, _ := openOrders(t)
	tools, err := s.ListTools(t.Context(), "orders")
	if err != nil {
		t.Fatalf("ListTools(orders): %v", err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("ListTools(orders): %s has no description", tool.Name)
		}
	}
	if diff := cmp.Diff([]string{"lookup_order", "refund"}, names); diff != "" {
		t.Errorf("ListTools(orders) names mismatch (-want +got):\n%s", diff)
	}
	if _, err := s.ListTools(t.Context(), "payments"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("ListTools(payments) = %v, want ErrUnknownServer", err)
	}
}

func TestDeclared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(t.Context(), dir, map[string]Server{
		"orders": {Command: "x", Tools: []Tool{{Name: "refund"}, {Name: "lookup_order"}}},
		"crm":    {Command: "y", Tools: []Tool{{Name: "find.customer"}}},
		"empty":  {Command: "z"},
	}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []string{"crm.find.customer", "orders.lookup_order", "orders.refund"}
	if diff := cmp.Diff(want, s.Declared()); diff != "" {
		t.Errorf("Declared() mismatch (-want +got):\n%s", diff)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	s, log := openOrders(t)
	const n = 20
	ids := []string{"A-1001", "A-1002", "A-1003"}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			id := ids[i%len(ids)]
			got, err := s.Call(t.Context(), "orders.lookup_order", map[string]any{"order_id": id})
			if err != nil {
				errs[i] = err
				return
			}
			if m, ok := got.(map[string]any); !ok || m["order_id"] != id {
				errs[i] = errors.New("wrong order: " + id)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if n := log.starts(); n != 1 {
		t.Errorf("server started %d times for %d concurrent calls, want 1", n, 20)
	}
}
