// Command mcp-orders is the order system of the refund-desk example: a small
// MCP server over stdio with two tools.
//
//	lookup_order {order_id}                 → {order_id, customer, amount, currency, status}
//	refund       {order_id, amount, reason} → {refund_id, order_id, amount, status}
//
// refund refuses an unknown order, an amount above the order's, and an order
// already refunded, as a tool error a model can read and recover from. An
// order is refunded once: a partial refund still closes it.
//
// State lives in memory, one table per process, unless ORDERS_STATE names a
// JSON file: then it is read at start and written after every refund, so a
// refund survives a restart of the server. A flow declares it like this
// (after `go build -o bin/mcp-orders ./mcp-orders` in the flow folder):
//
//	"requires": { "mcp": { "orders": {
//	  "command": "./bin/mcp-orders",
//	  "env": { "ORDERS_STATE": "orders.json" },
//	  "tools": [
//	    { "name": "lookup_order", "description": "Look up an order by its id." },
//	    { "name": "refund", "description": "Refund an order, once." } ] } } }
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-orders:", err)
		os.Exit(1)
	}
}

// run serves the two tools on stdin/stdout until the client closes stdin or
// ctx ends.
func run(ctx context.Context, getenv func(string) string) error {
	st, err := openStore(getenv("ORDERS_STATE"))
	if err != nil {
		return err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "mcp-orders", Version: "v0.1.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "lookup_order",
		Description: "Look up an order by its id: the customer, the amount and currency paid, and its status (delivered or refunded).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, st.lookup)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "refund",
		Description: "Refund an order, in full or in part, once. Refuses an unknown order, an amount above the order's, and an order already refunded.",
	}, st.refund)
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// order is one row of the order table.
type order struct {
	OrderID  string  `json:"order_id" jsonschema:"the order's id, like A-1001"`
	Customer string  `json:"customer" jsonschema:"who placed the order"`
	Amount   float64 `json:"amount" jsonschema:"what was paid, in currency units"`
	Currency string  `json:"currency" jsonschema:"ISO 4217 code, like EUR"`
	Status   string  `json:"status" jsonschema:"delivered or refunded"`
}

type lookupIn struct {
	OrderID string `json:"order_id" jsonschema:"the order's id, like A-1001"`
}

type refundIn struct {
	OrderID string  `json:"order_id" jsonschema:"the order to refund"`
	Amount  float64 `json:"amount" jsonschema:"how much to refund, at most the order's amount"`
	Reason  string  `json:"reason" jsonschema:"why, in a sentence"`
}

type refundOut struct {
	RefundID string  `json:"refund_id"`
	OrderID  string  `json:"order_id"`
	Amount   float64 `json:"amount"`
	Status   string  `json:"status"`
}

// state is what ORDERS_STATE holds.
type state struct {
	Orders  map[string]*order `json:"orders"`
	Refunds []refundOut       `json:"refunds"`
}

func seed() state {
	return state{Orders: map[string]*order{
		"A-1001": {OrderID: "A-1001", Customer: "Ada Lovelace", Amount: 49.90, Currency: "EUR", Status: "delivered"},
		"A-1002": {OrderID: "A-1002", Customer: "Grace Hopper", Amount: 5000, Currency: "EUR", Status: "delivered"},
		"A-1003": {OrderID: "A-1003", Customer: "Alan Turing", Amount: 12.00, Currency: "EUR", Status: "refunded"},
	}}
}

// store is the order table, safe for the concurrent calls a session makes.
type store struct {
	path string // "" keeps state in memory only

	mu sync.Mutex
	st state
}

func openStore(path string) (*store, error) {
	s := &store{path: path, st: seed()}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	s.st = st
	return s, nil
}

func (s *store) lookup(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.st.Orders[in.OrderID]
	if !ok {
		return nil, order{}, fmt.Errorf("no order %q", in.OrderID)
	}
	return nil, *o, nil
}

func (s *store) refund(_ context.Context, _ *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, refundOut, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.st.Orders[in.OrderID]
	switch {
	case !ok:
		return nil, refundOut{}, fmt.Errorf("no order %q", in.OrderID)
	case o.Status == "refunded":
		return nil, refundOut{}, fmt.Errorf("order %s is already refunded", o.OrderID)
	case cents(in.Amount) <= 0:
		return nil, refundOut{}, fmt.Errorf("a refund must be more than 0 %s", o.Currency)
	case cents(in.Amount) > cents(o.Amount):
		return nil, refundOut{}, fmt.Errorf("order %s was %.2f %s: cannot refund %.2f", o.OrderID, o.Amount, o.Currency, in.Amount)
	case in.Reason == "":
		return nil, refundOut{}, errors.New("a refund needs a reason")
	}
	r := refundOut{
		RefundID: fmt.Sprintf("R-%04d", len(s.st.Refunds)+1),
		OrderID:  o.OrderID,
		Amount:   in.Amount,
		Status:   "refunded",
	}
	before := o.Status
	o.Status = "refunded"
	s.st.Refunds = append(s.st.Refunds, r)
	if err := s.save(); err != nil {
		o.Status = before
		s.st.Refunds = s.st.Refunds[:len(s.st.Refunds)-1]
		return nil, refundOut{}, fmt.Errorf("refund not recorded: %w", err)
	}
	return nil, r, nil
}

// save writes the state to s.path by replacing the file, so a crash leaves
// either the old state or the new one. The caller holds s.mu.
func (s *store) save() error {
	if s.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(s.st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".orders-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// cents compares amounts in whole cents, so 49.9 and 49.90 are the same.
func cents(amount float64) int64 { return int64(math.Round(amount * 100)) }
