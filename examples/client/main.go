// Command client is a small program outside the Symphonix module that uses
// its generated connect-go client: it lists a board's agents and the
// approvals waiting for a decision, reading every page.
//
//	export SYMPHONIX_TOKEN=$(go run ./cmd/board token operator --name me --role viewer)
//	cd examples/client && go run . -board http://127.0.0.1:7777
//
// It is a module of its own (example.com/symphonix-client) that requires
// github.com/symphonix/symphonix as any importer would; its go.mod points
// the requirement at this checkout with a replace directive.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// run lists the agents, then the pending approvals, of the board the flags
// name, with the operator token in SYMPHONIX_TOKEN.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	boardURL := fs.String("board", "http://127.0.0.1:7777", "the board's URL")
	pageSize := fs.Int("page-size", 0, "how many agents or approvals to ask for a page; 0 takes the board's default")
	timeout := fs.Duration("timeout", 30*time.Second, "how long the whole listing may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the client takes flags only", fs.Args())
	}
	u, err := url.Parse(*boardURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-board: want an http:// or https:// URL, got %q", *boardURL)
	}
	if *pageSize < 0 || *pageSize > 1000 {
		return fmt.Errorf("-page-size: want 0 to 1000, got %d", *pageSize)
	}
	token := getenv("SYMPHONIX_TOKEN")
	if token == "" {
		return errors.New("SYMPHONIX_TOKEN: empty; set it to an operator token (board token operator --name NAME --role viewer)")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	// One connect.Client serves every service of the board. The default
	// http.Client speaks HTTP/1.1 to an http:// board and HTTP/2 to an
	// https:// one; the Connect protocol works over both.
	client := connect.NewClient(connecthttp.NewTransport(http.DefaultClient, *boardURL), withBearer(token))
	agents := boardv1connect.NewAgentServiceClient(client)
	approvals := boardv1connect.NewApprovalServiceClient(client)

	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "AGENT\tSTATE\tLAST SEEN")
	req := &boardv1.ListAgentsRequest{PageSize: int32(*pageSize)}
	for {
		res, err := agents.ListAgents(ctx, req)
		if err != nil {
			return fmt.Errorf("list agents: %w", err)
		}
		for _, a := range res.GetAgents() {
			fmt.Fprintf(w, "%s\t%s\t%s\n", a.GetName(), agentState(a.GetState()), when(a.GetLastSeenTime().AsTime()))
		}
		if res.GetNextPageToken() == "" {
			break
		}
		req.PageToken = res.GetNextPageToken()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PENDING\tAGENT\tASK\tRAISED")
	areq := &boardv1.ListApprovalsRequest{State: boardv1.ApprovalState_APPROVAL_STATE_PENDING, PageSize: int32(*pageSize)}
	for {
		res, err := approvals.ListApprovals(ctx, areq)
		if err != nil {
			return fmt.Errorf("list approvals: %w", err)
		}
		for _, a := range res.GetApprovals() {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", a.GetId(), a.GetAgent(), a.GetAsk(), when(a.GetCreateTime().AsTime()))
		}
		if res.GetNextPageToken() == "" {
			break
		}
		areq.PageToken = res.GetNextPageToken()
	}
	return w.Flush()
}

// withBearer sends token as a bearer credential on every call, the way the
// board reads it from the Authorization header.
func withBearer(token string) connect.ClientInterceptor {
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			info, ok := connect.CallInfoForClientContext(ctx)
			if !ok {
				ctx, info = connect.NewClientContext(ctx)
			}
			info.RequestHeader().Set("Authorization", "Bearer "+token)
			return next(ctx, spec)
		}
	}
}

func agentState(s boardv1.AgentState) string {
	switch s {
	case boardv1.AgentState_AGENT_STATE_ONLINE:
		return "online"
	case boardv1.AgentState_AGENT_STATE_OFFLINE:
		return "offline"
	}
	return "unknown"
}

func when(t time.Time) string {
	if t.Unix() <= 0 {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
