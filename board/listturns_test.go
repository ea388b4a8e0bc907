package board_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestListsTakeTurns: one caller's lists are answered one at a time. While
// one is held (its client does not read a megabyte of approvals), 16 more
// of the same caller wait, the next is refused with resource_exhausted,
// and another caller's list is answered; once the held one is read, the
// 16 are answered.
func TestListsTakeTurns(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	for i := range 8 { // 1.2 MiB in a list
		l.raised(largest(fmt.Sprint("run-", i), i))
	}
	mallory := bt.OperatorToken("mallory", identity.RoleViewer)
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second) // the ceiling
	defer cancel()

	// The held list: asked over a connection that takes 64 KiB at a time,
	// uncompressed, and not read.
	slow := &http.Client{Transport: &http.Transport{
		Protocols:          unencryptedHTTP2(),
		DisableCompression: true,
		HTTP2:              &http.HTTP2Config{MaxReceiveBufferPerConnection: 64 << 10, MaxReceiveBufferPerStream: 64 << 10},
	}}
	defer slow.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, bt.URL+boardv1connect.ApprovalServiceListApprovalsProcedure, bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/proto")
	req.Header.Set("Authorization", "Bearer "+mallory)
	held, err := slow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Body.Close()
	if held.StatusCode != http.StatusOK {
		t.Fatalf("the held list: %s", held.Status)
	}

	// 17 more: 16 wait their turn, whichever come first, and one is
	// refused.
	agents := bt.Agents(mallory)
	var wg sync.WaitGroup
	answered := make(chan error, 17)
	for range 17 {
		wg.Go(func() {
			_, err := agents.ListAgents(ctx, &boardv1.ListAgentsRequest{})
			answered <- err
		})
	}
	err = <-answered
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeResourceExhausted ||
		ce.Message() != "too many lists at once: one token or person has one answered at a time and at most 16 waiting; wait for one" {
		t.Fatalf("the first of 17 lists beside a held one to be answered: %v, want resource_exhausted naming the limit", err)
	}
	select {
	case err := <-answered:
		t.Fatalf("a second list was answered (%v) while the caller's held one was not read", err)
	default:
	}
	// Another caller is not held by mallory's turn.
	if _, err := bt.Agents(bt.OperatorToken("olga", identity.RoleViewer)).ListAgents(ctx, &boardv1.ListAgentsRequest{}); err != nil {
		t.Fatalf("another caller's list: %v", err)
	}
	if _, err := io.Copy(io.Discard, held.Body); err != nil {
		t.Fatalf("reading the held list: %v", err)
	}
	wg.Wait()
	close(answered)
	for err := range answered {
		if err != nil {
			t.Errorf("a list that waited its turn: %v", err)
		}
	}
}
