package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/receiptkey"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/receipts"
)

// newReceiptCmd verifies decision receipts offline and manages the keys
// the board signs them with.
func newReceiptCmd(a *app) *cobra.Command {
	c := cli.Group("receipt", "Verify a decision's signed receipt, and manage the keys the board signs them with")
	c.Aliases = []string{"receipts"}
	c.AddCommand(newReceiptVerifyCmd(a), newReceiptKeysCmd(a), newReceiptRotateCmd(a))
	return c
}

// errBadReceipt: verify found the receipt wanting (exit 1).
var errBadReceipt = errors.New("receipt not valid")

// maxReceiptFile is the most of a receipt file verify reads.
const maxReceiptFile = receipts.MaxBytes

func newReceiptVerifyCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "verify FILE --keys KEYS.json",
		Short: "Check a receipt (a file holding the JWS, or - for stdin) with the board's published keys, offline; exits 1 saying why when it does not verify",
		Args:  cli.Args("FILE"),
	}
	keysFile := c.Flags().String("keys", "", "the board's receipt keys, as /.well-known/receipt-keys.json or board receipt keys give them (required)")
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *keysFile == "" {
			return cli.Usagef("--keys: required: the board's receipt keys (board receipt keys, or its /.well-known/receipt-keys.json)")
		}
		rawKeys, err := readBounded(*keysFile, 1<<20)
		if err != nil {
			return fmt.Errorf("--keys: %w", err)
		}
		keys, err := receipts.ParseKeySet(rawKeys)
		if err != nil {
			return fmt.Errorf("--keys: %w", err)
		}
		var raw []byte
		if args[0] == "-" {
			raw, err = readAllBounded(cmd.InOrStdin(), maxReceiptFile, "stdin")
		} else {
			raw, err = readBounded(args[0], maxReceiptFile)
		}
		if err != nil {
			return err
		}
		r, err := receipts.Verify(strings.TrimSpace(string(raw)), keys)
		if err != nil {
			fmt.Fprintf(a.stdout, "receipt: not valid: %v\n", err)
			return errBadReceipt
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, r)
		}
		fmt.Fprintf(a.stdout, "receipt: valid\napproval %s (agent %s, run %s, node %s)\nsaid %s", r.Approval, r.Agent, r.Run, r.Node, r.Say)
		if len(r.Who) > 0 {
			fmt.Fprintf(a.stdout, " by %s", strings.Join(r.Who, ", "))
		}
		fmt.Fprintf(a.stdout, " at %s\ndigest %s\n", r.DecidedAt.UTC().Format(time.RFC3339Nano), r.Digest)
		if r.Rule != "" {
			fmt.Fprintf(a.stdout, "rule %s, version %s\n", r.Rule, r.RuleVersion)
		}
		fmt.Fprintf(a.stdout, "audit entry content %s\n", r.Audit)
		return nil
	}
	return c
}

func newReceiptKeysCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "keys",
		Short: "Print the store's receipt keys, public halves, as the board publishes them (for verify --keys)",
		Args:  cli.NoArgs,
	}
	where := storeFlags(c.Flags(), false)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		rows, err := db.ReceiptKey.Query().Order(ent.Asc(receiptkey.FieldNotBefore), ent.Asc(receiptkey.FieldCreatedAt)).All(ctx)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return errors.New("the store has no receipt keys yet: the board makes the first when it starts")
		}
		set, err := board.ReceiptKeySet(rows)
		if err != nil {
			return err
		}
		raw, err := json.MarshalIndent(json.RawMessage(set), "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, string(raw))
		return nil
	}
	return c
}

func newReceiptRotateCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "rotate-key",
		Short: "Make a new receipt key, signing from --start-in on; the one signing now is retired then, and stays published",
		Args:  cli.NoArgs,
	}
	where := storeFlags(c.Flags(), false)
	startIn := c.Flags().Duration("start-in", time.Minute, "how long until the new key signs: at least 15s, for every board to publish it first")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *startIn < 15*time.Second || *startIn > 24*time.Hour {
			return cli.Usagef("--start-in: %s: want 15s to 24h", *startIn)
		}
		ctx := cmd.Context()
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		from := time.Now().Add(*startIn)
		kid, err := board.NewReceiptKey(ctx, db, from)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "receipt key %s signs from %s; the key signing now is retired then\n", kid, from.UTC().Truncate(time.Second).Format(time.RFC3339))
		return nil
	}
	return c
}
