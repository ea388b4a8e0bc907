package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/internal/cli"
)

// withAPI makes the store-side audit commands (audit list, audit verify)
// read a running board's AuditService instead when --board (or
// SYMPHONIX_BOARD, or the config file) names one; without it they read
// the store as before (docs/cli.md). --data or --database on the command
// line reads the store whatever the environment says; with --board on the
// command line too, it is refused.
func withAPI(a *app, audit *cobra.Command) *cobra.Command {
	for _, c := range audit.Commands() {
		storeRun := c.RunE
		var apiRun func(cmd *cobra.Command, bc *boardClient) error
		switch c.Name() {
		case "list":
			apiRun = func(cmd *cobra.Command, bc *boardClient) error {
				after, _ := cmd.Flags().GetInt64("after")
				limit, _ := cmd.Flags().GetInt("limit")
				if err := checkLimit(limit); err != nil {
					return err
				}
				return auditListAPI(cmd.Context(), a, bc, after, limit, jsonOutput(cmd))
			}
		case "verify":
			apiRun = func(cmd *cobra.Command, bc *boardClient) error {
				r, err := auditVerifyAPI(cmd.Context(), bc)
				if err != nil {
					return err
				}
				return printVerify(a, jsonOutput(cmd), r)
			}
		default:
			continue
		}
		co := clientFlags(c.Flags())
		c.RunE = func(cmd *cobra.Command, args []string) error {
			store := ""
			for _, n := range []string{"data", "database"} {
				if cmd.Flags().Changed(n) {
					store = n
				}
			}
			switch {
			case store != "" && cmd.Flags().Changed("board"):
				return cli.Usagef("--%s and --board: read the store or a running board, not both", store)
			case store != "" || !boardGiven(a):
				// A store named on the command line wins over a board
				// named in the environment or the config file.
				return storeRun(cmd, args)
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			return apiRun(cmd, bc)
		}
	}
	return audit
}

// boardGiven reports whether the command that runs was given a board, on
// the command line, in the environment or in the config file.
func boardGiven(a *app) bool {
	for _, s := range a.root.Config.Settings() {
		if s.Key == "board" {
			return s.Source != cli.FromDefault
		}
	}
	return false
}

// jsonOutput reports whether the command was given --output json.
func jsonOutput(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("output")
	return f != nil && f.Value.String() == cli.FormatJSON
}

// auditListAPI prints up to limit entries after seq after, read from the
// board a page at a time, as audit list prints the store's.
func auditListAPI(ctx context.Context, a *app, bc *boardClient, after int64, limit int, asJSON bool) error {
	entries, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.AuditEntry, string, error) {
		res, err := bc.audit.ListAudit(ctx, &boardv1.ListAuditRequest{AfterSeq: after, PageSize: size, PageToken: token})
		if err != nil {
			return nil, "", bc.explain(err, "audit")
		}
		return res.GetEntries(), res.GetNextPageToken(), nil
	})
	if err != nil {
		return err
	}
	t := cli.Table{Header: []string{"SEQ", "AT", "ACTOR", "ACTION", "SUBJECT", "DETAIL", "HASH"}}
	list := make([]entryJSON, 0, len(entries))
	for _, e := range entries {
		detail, err := detailJSON(e)
		if err != nil {
			return fmt.Errorf("audit entry %d: its detail: %w", e.GetSeq(), err)
		}
		at := e.GetRecordTime().AsTime().UTC()
		t.Append(strconv.FormatInt(e.GetSeq(), 10), at.Format(time.RFC3339Nano), sanitize(e.GetActor(), false), sanitize(e.GetAction(), false),
			sanitize(e.GetSubject(), false), sanitize(string(detail), false), e.GetHash())
		list = append(list, entryJSON{Seq: e.GetSeq(), At: at, Actor: e.GetActor(), Action: e.GetAction(), Subject: e.GetSubject(), Detail: detail, Hash: e.GetHash()})
	}
	if asJSON {
		err = cli.PrintJSON(a.stdout, list)
	} else {
		err = cli.PrintTable(a.stdout, t)
	}
	if err != nil {
		return err
	}
	if more {
		fmt.Fprintf(a.stderr, "board: more than %d; pass --after %d for the next\n", limit, entries[len(entries)-1].GetSeq())
	}
	return nil
}

// auditVerifyAPI reads the whole log from the board, a page at a time, and
// checks its chain here, with the audit package's own hashing: every
// entry's hash is recomputed from what the board sent. It finds an entry
// changed, removed or moved in the board's store; it trusts the board
// itself to send the rows as stored (docs/cli.md).
func auditVerifyAPI(ctx context.Context, bc *boardClient) (audit.VerifyResult, error) {
	var chain audit.Chain
	req := &boardv1.ListAuditRequest{PageSize: 1000}
	for {
		res, err := bc.audit.ListAudit(ctx, req)
		if err != nil {
			return audit.VerifyResult{}, bc.explain(err, "audit")
		}
		for _, e := range res.GetEntries() {
			detail, err := detailJSON(e)
			if err != nil {
				r := chain.Result()
				r.Bad, r.Why = e.GetSeq(), fmt.Errorf("%w (%v)", audit.ErrModified, err)
				return r, nil
			}
			ok := chain.Next(audit.Entry{
				Seq: e.GetSeq(), At: e.GetRecordTime().AsTime(), Actor: e.GetActor(), Action: e.GetAction(),
				Subject: e.GetSubject(), Detail: detail, Prev: e.GetPrev(), Hash: e.GetHash(),
			})
			if !ok {
				return chain.Result(), nil
			}
		}
		req.PageToken = res.GetNextPageToken()
		if req.PageToken == "" {
			return chain.Result(), nil
		}
	}
}

// detailJSON is an entry's detail as a JSON object. The board sends it as
// a Struct, whose numbers are doubles: the stored detail's numbers are
// doubles too (RFC 8785 reads every number as one), so nothing is lost.
func detailJSON(e *boardv1.AuditEntry) (json.RawMessage, error) {
	if e.GetDetail() == nil {
		return json.RawMessage("{}"), nil
	}
	return json.Marshal(e.GetDetail().AsMap())
}

// printVerify prints what verifying the board's log found, as audit
// verify prints the store's, and fails when the chain is broken.
func printVerify(a *app, asJSON bool, r audit.VerifyResult) error {
	switch {
	case asJSON:
		v := verifyJSON{OK: r.OK(), Entries: r.Entries, Head: r.Head, Bad: r.Bad}
		if r.Why != nil {
			v.Why = r.Why.Error()
		}
		if err := cli.PrintJSON(a.stdout, v); err != nil {
			return err
		}
	case !r.OK():
		fmt.Fprintf(a.stdout, "audit: entry %d: %v\n", r.Bad, r.Why)
	default:
		fmt.Fprintf(a.stdout, "audit: %d entries, chain intact\n", r.Entries)
		if r.Entries > 0 {
			fmt.Fprintf(a.stdout, "audit: head %d %s\n", r.Entries, r.Head)
		}
	}
	if !r.OK() {
		return errAuditBroken
	}
	return nil
}
