package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/internal/cli"
)

var errAuditBroken = errors.New("audit chain broken")

// newAuditCmd verifies and lists the audit log. A broken chain is an
// error, so the command exits 1 and names the first bad entry.
func newAuditCmd(a *app) *cobra.Command {
	c := cli.Group("audit", "Verify and list the hash-chained audit log")
	c.AddCommand(newAuditVerifyCmd(a), newAuditListCmd(a))
	return c
}

// verifyJSON is audit verify's -o json.
type verifyJSON struct {
	OK      bool   `json:"ok"`
	Entries int64  `json:"entries"`
	Head    string `json:"head"`
	Bad     int64  `json:"bad,omitempty"`
	// Pending and BadRow: entries not yet chained (audit.VerifyResult).
	Pending int64  `json:"pending,omitempty"`
	BadRow  int    `json:"bad_row,omitempty"`
	Why     string `json:"why,omitempty"`
}

func newAuditVerifyCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "verify",
		Short: "Check the audit log's hash chain; exits 1 naming the first bad entry",
		Args:  cli.NoArgs,
	}
	where := storeFlags(c.Flags(), false)
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		r, err := audit.New(db).Verify(ctx)
		if err != nil {
			return err
		}
		if out.JSON() {
			v := verifyJSON{OK: r.OK(), Entries: r.Entries, Head: r.Head, Bad: r.Bad, Pending: r.Pending, BadRow: r.BadRow}
			if r.Why != nil {
				v.Why = r.Why.Error()
			}
			if err := cli.PrintJSON(a.stdout, v); err != nil {
				return err
			}
		} else {
			switch {
			case r.Bad != 0:
				fmt.Fprintf(a.stdout, "audit: entry %d: %v\n", r.Bad, r.Why)
			case r.BadRow != 0:
				fmt.Fprintf(a.stdout, "audit: entry not yet chained (row %d): %v\n", r.BadRow, r.Why)
			default:
				fmt.Fprintf(a.stdout, "audit: %d entries, chain intact\n", r.Entries)
				if r.Entries > 0 {
					fmt.Fprintf(a.stdout, "audit: head %d %s\n", r.Entries, r.Head)
				}
			}
			if r.Pending > 0 {
				fmt.Fprintf(a.stdout, "audit: %d entries not yet chained (their content hashes checked)\n", r.Pending)
			}
		}
		if !r.OK() {
			return errAuditBroken
		}
		return nil
	}
	return c
}

// entryJSON is an entry in audit list -o json.
type entryJSON struct {
	Seq     int64           `json:"seq"`
	At      time.Time       `json:"at"`
	Actor   string          `json:"actor"`
	Action  string          `json:"action"`
	Subject string          `json:"subject"`
	Detail  json.RawMessage `json:"detail"`
	Hash    string          `json:"hash"`
}

func newAuditListCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List the audit log's entries, oldest first",
		Args:  cli.NoArgs,
	}
	fs := c.Flags()
	where := storeFlags(fs, false)
	var out cli.Output
	out.AddFlag(fs)
	after := fs.Int64("after", 0, "list the entries after this seq")
	limit := fs.Int("limit", 100, "list at most this many entries (at most 1000)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		entries, err := audit.New(db).List(ctx, *after, *limit)
		if err != nil {
			return err
		}
		t := cli.Table{Header: []string{"SEQ", "AT", "ACTOR", "ACTION", "SUBJECT", "DETAIL", "HASH"}}
		list := make([]entryJSON, 0, len(entries))
		for _, e := range entries {
			t.Append(strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action, e.Subject, string(e.Detail), e.Hash)
			list = append(list, entryJSON{Seq: e.Seq, At: e.At.UTC(), Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: e.Detail, Hash: e.Hash})
		}
		return out.Print(a.stdout, t, list)
	}
	return c
}
