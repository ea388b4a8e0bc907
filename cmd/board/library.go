package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"connectrpc.com/connect/v2"
	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/library"
	"github.com/symphonix/symphonix/packages"
)

// The library's commands: clients of a running board's PackageService.
// They check what the command line says (exit 2), send it, and print what
// the board answers; the board runs the gates and names the one that
// refuses.

// Bounds of the library's commands (docs/limits.md).
const (
	// chunkBytes is the most one message of a publish carries, as the
	// API asks.
	chunkBytes = 1 << 20
	// maxReasonBytes is the most a --reason of key revoke or package yank
	// may hold, as the API takes.
	maxReasonBytes = 1024
	// maxScopePublishers is the most --publisher flags of scope set.
	maxScopePublishers = 64
	// maxThreshold is the most signatures a scope may ask for.
	maxThreshold = 32
	// maxDownloadBytes is the most package download writes: what package
	// verify reads (packages.DefaultLimits), so a download can always be
	// checked again offline.
	maxDownloadBytes = 64 << 20
)

// checkPublisher reads a --publisher: a lowercase DNS label, as a scope.
func checkPublisher(p string) error {
	if err := packages.CheckScope(p); err != nil {
		return cli.Usagef("--publisher: %v", err)
	}
	return nil
}

// checkReason reads a --reason: required, at most maxReasonBytes.
func checkReason(r string) error {
	switch {
	case strings.TrimSpace(r) == "":
		return cli.Usagef("--reason: required: say why (it is kept with the change, in the audit log)")
	case len(r) > maxReasonBytes:
		return cli.Usagef("--reason: %d bytes, at most %d", len(r), maxReasonBytes)
	}
	return nil
}

// ---- board key add|list|revoke ----

func keyAdd(a *app) *cobra.Command {
	var out cli.Output
	var publisher string
	c := &cobra.Command{
		Use:   "add PUBKEY --publisher NAME",
		Short: "Trust a public key on a running board as one publisher's (PUBKEY: a .pub file or ed25519:BASE64)",
		Long: `Add trusts one Ed25519 public key, on a running board, as the key of a publisher: its
signatures count toward the gates of the scopes that allow the publisher. PUBKEY is the
FILE.pub that board key create wrote, or the key's text (ed25519:BASE64). Adding a key
already trusted for the same publisher changes nothing; a revoked key is never trusted
again. Admins only.`,
		Example: `  board key add signer.key.pub --publisher acme`,
		Args:    cli.Args("PUBKEY"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&publisher, "publisher", "", "the publisher the key belongs to: a lowercase DNS label (1 to 63 of a-z, 0-9 and '-', not starting or ending with '-')")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if publisher == "" {
			return cli.Usagef("--publisher: required: the publisher the key belongs to")
		}
		if err := checkPublisher(publisher); err != nil {
			return err
		}
		pub, err := trustedKey(args[0])
		if err != nil {
			return cli.Usagef("PUBKEY: %v", err)
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		res, err := bc.packages.AddKey(cmd.Context(), &boardv1.AddKeyRequest{PublicKey: packages.FormatPublicKey(pub), Publisher: publisher})
		if err != nil {
			return bc.explain(err, "key "+packages.KeyID(pub))
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, protoJSON(res))
		}
		k := res.GetKey()
		if res.GetCreated() {
			_, err = fmt.Fprintf(a.stdout, "key %s trusted for publisher %s\n", k.GetKeyId(), clip(k.GetPublisher(), 63))
		} else {
			_, err = fmt.Fprintf(a.stdout, "key %s was already trusted for publisher %s (added by %s at %s): nothing changed\n",
				k.GetKeyId(), clip(k.GetPublisher(), 63), clip(k.GetAddedBy(), 128), when(k.GetAddTime()))
		}
		return err
	}
	return c
}

func keyList(a *app) *cobra.Command {
	var out cli.Output
	var limit int
	var publisher string
	c := &cobra.Command{
		Use:   "list [--publisher NAME]",
		Short: "List the publisher keys a running board knows, revoked ones included",
		Args:  cli.NoArgs,
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	c.Flags().StringVar(&publisher, "publisher", "", "only this publisher's keys")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		if publisher != "" {
			if err := checkPublisher(publisher); err != nil {
				return err
			}
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		keys, more, err := listKeys(cmd.Context(), bc, publisher, limit)
		if err != nil {
			return err
		}
		t := cli.Table{Header: []string{"KEY ID", "PUBLISHER", "PUBLIC KEY", "ADDED BY", "ADDED", "REVOKED"}}
		for _, k := range keys {
			t.Append(k.GetKeyId(), clip(k.GetPublisher(), 63), k.GetPublicKey(), clip(k.GetAddedBy(), 40), when(k.GetAddTime()), revoked(k.GetRevoked()))
		}
		if err := out.Print(a.stdout, t, protoJSONs(keys)); err != nil {
			return err
		}
		a.more(more, limit)
		return nil
	}
	return c
}

// listKeys reads up to limit keys, of one publisher when it is not "".
func listKeys(ctx context.Context, bc *boardClient, publisher string, limit int) ([]*boardv1.PublisherKey, bool, error) {
	return readPages(limit, 1000, func(size int32, token string) ([]*boardv1.PublisherKey, string, error) {
		res, err := bc.packages.ListKeys(ctx, &boardv1.ListKeysRequest{PageSize: size, PageToken: token, Publisher: publisher})
		if err != nil {
			return nil, "", bc.explain(err, "")
		}
		return res.GetKeys(), res.GetNextPageToken(), nil
	})
}

// revoked is a key's revocation for a table cell: "-", or who and when.
func revoked(r *boardv1.Revoked) string {
	if r == nil {
		return "-"
	}
	return "by " + clip(r.GetBy(), 40) + " at " + when(r.GetTime())
}

func keyRevoke(a *app) *cobra.Command {
	var out cli.Output
	var reason string
	var yes bool
	c := &cobra.Command{
		Use:   "revoke KEYID --reason TEXT [--yes]",
		Short: "Stop trusting a publisher key on a running board, for good",
		Long: `Revoke stops trusting a key, for good: its signatures no longer count toward any gate or
install check, for versions published before as after, and it can never be added again.
It shows the key on stderr, then asks for confirmation on the terminal. Without a terminal
it refuses unless --yes is given on the command line. Admins only.`,
		Example: `  board key revoke sha256:03ba… --reason "laptop stolen"`,
		Args:    cli.Args("KEYID"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&reason, "reason", "", fmt.Sprintf("why; required, at most %d bytes", maxReasonBytes))
	c.Flags().BoolVarP(&yes, "yes", "y", false, "revoke without asking (for scripts); only on the command line (env SYMPHONIX_YES and the config file are ignored)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		id := args[0]
		if err := packages.CheckDigest(id); err != nil {
			return cli.Usagef("KEYID: %v, as board key list prints it", err)
		}
		if err := checkReason(reason); err != nil {
			return err
		}
		// --yes counts only on the command line: an environment variable
		// or a config file never revokes anything for anyone.
		yes = yes && cmd.Flags().Changed("yes")
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		k, err := findKey(cmd.Context(), bc, id)
		if err != nil {
			return err
		}
		if r := k.GetRevoked(); r != nil {
			return fmt.Errorf("key %s is already revoked %s: nothing to do", id, revoked(r))
		}
		fmt.Fprintf(a.stderr, "key        %s\npublisher  %s\nadded      by %s at %s\nrevoking it is for good: its signatures stop counting, for every version it signed\n",
			id, clip(k.GetPublisher(), 63), clip(k.GetAddedBy(), 128), when(k.GetAddTime()))
		if !yes {
			if err := askYes(cmd.InOrStdin(), a.stderr, "key "+id, "not revoked", "revoke key "+id+" of "+clip(k.GetPublisher(), 63), "revoke"); err != nil {
				return err
			}
		}
		res, err := bc.packages.RevokeKey(cmd.Context(), &boardv1.RevokeKeyRequest{KeyId: id, Reason: reason})
		if err != nil {
			return bc.explain(err, "key "+id)
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, protoJSON(res.GetKey()))
		}
		_, err = fmt.Fprintf(a.stdout, "key %s revoked %s\n", id, revoked(res.GetKey().GetRevoked()))
		return err
	}
	return c
}

// findKey is the key id as the board lists it; not found is an error.
func findKey(ctx context.Context, bc *boardClient, id string) (*boardv1.PublisherKey, error) {
	req := &boardv1.ListKeysRequest{PageSize: 1000}
	for seen := 0; seen < maxLimit; {
		res, err := bc.packages.ListKeys(ctx, req)
		if err != nil {
			return nil, bc.explain(err, "key "+id)
		}
		for _, k := range res.GetKeys() {
			if k.GetKeyId() == id {
				return k, nil
			}
		}
		seen += len(res.GetKeys())
		if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
			break
		}
	}
	return nil, fmt.Errorf("key %s: not found: the board does not know it (board key list)", id)
}

// ---- board scope set|list ----

// newScopeCmd is board scope: who may publish in each scope of the
// library, and how many must sign.
func newScopeCmd(a *app) *cobra.Command {
	c := cli.Group("scope", "Set who may publish in a scope of a running board's library, and how many must sign: set, list")
	c.Aliases = []string{"scopes"}
	c.AddCommand(scopeSet(a), scopeList(a))
	return c
}

func scopeSet(a *app) *cobra.Command {
	var out cli.Output
	var publishers []string
	var threshold int
	var none bool
	c := &cobra.Command{
		Use:   "set NAME (--publisher NAME... [--threshold N] | --none)",
		Short: "Set which publishers may publish in a scope and how many of their keys must sign",
		Long: `Set replaces a scope's publishers and threshold: a package named SCOPE/NAME is admitted
only when at least --threshold distinct trusted keys of these publishers signed it. A
scope nobody has set admits nothing; --none closes one to new versions. Admins only.`,
		Example: `  board scope set acme --publisher acme
  board scope set bank --publisher release --publisher security --threshold 2`,
		Args: cli.Args("NAME"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	c.Flags().StringArrayVar(&publishers, "publisher", nil, fmt.Sprintf("a publisher allowed in the scope; repeatable (at most %d)", maxScopePublishers))
	c.Flags().IntVar(&threshold, "threshold", 1, fmt.Sprintf("how many distinct trusted keys of those publishers must sign each package (1 to %d)", maxThreshold))
	c.Flags().BoolVar(&none, "none", false, "admit no publisher: close the scope to new versions")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		name := args[0]
		if err := packages.CheckScope(name); err != nil {
			return cli.Usagef("NAME: %v", err)
		}
		switch {
		case none && len(publishers) > 0:
			return cli.Usagef("--none and --publisher: give one of them")
		case !none && len(publishers) == 0:
			return cli.Usagef("--publisher: required: who may publish in %s (or --none to admit nobody)", name)
		case len(publishers) > maxScopePublishers:
			return cli.Usagef("--publisher: %d given, at most %d", len(publishers), maxScopePublishers)
		case threshold < 1 || threshold > maxThreshold:
			return cli.Usagef("--threshold: %d, want 1 to %d", threshold, maxThreshold)
		}
		for _, p := range publishers {
			if err := checkPublisher(p); err != nil {
				return err
			}
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		res, err := bc.packages.PutScope(cmd.Context(), &boardv1.PutScopeRequest{Name: name, Publishers: publishers, Threshold: int32(threshold)})
		if err != nil {
			return bc.explain(err, "scope "+name)
		}
		return out.Print(a.stdout, scopeTable([]*boardv1.Scope{res.GetScope()}), protoJSON(res.GetScope()))
	}
	return c
}

func scopeList(a *app) *cobra.Command {
	var out cli.Output
	var limit int
	c := &cobra.Command{
		Use:   "list",
		Short: "List the library's scopes: who may publish in each, and how many must sign",
		Args:  cli.NoArgs,
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		scopes, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.Scope, string, error) {
			res, err := bc.packages.ListScopes(cmd.Context(), &boardv1.ListScopesRequest{PageSize: size, PageToken: token})
			if err != nil {
				return nil, "", bc.explain(err, "")
			}
			return res.GetScopes(), res.GetNextPageToken(), nil
		})
		if err != nil {
			return err
		}
		if err := out.Print(a.stdout, scopeTable(scopes), protoJSONs(scopes)); err != nil {
			return err
		}
		a.more(more, limit)
		return nil
	}
	return c
}

func scopeTable(scopes []*boardv1.Scope) cli.Table {
	t := cli.Table{Header: []string{"SCOPE", "PUBLISHERS", "THRESHOLD", "SET BY", "SET"}}
	for _, s := range scopes {
		t.Append(clip(s.GetName(), 63), clip(strings.Join(s.GetPublishers(), ","), 120), strconv.Itoa(int(s.GetThreshold())), clip(s.GetSetBy(), 40), when(s.GetSetTime()))
	}
	return t
}

// ---- board package publish|list|show|yank|download ----

func packagePublish(a *app) *cobra.Command {
	var out cli.Output
	var sigFile string
	c := &cobra.Command{
		Use:   "publish FILE [--sig SIGFILE]",
		Short: "Upload a signed package to a running board's library, through its four gates",
		Long: `Publish sends a package and its signatures (FILE.sig.json, as board package sign writes
it, unless --sig says otherwise) to a running board, streaming the archive in 1 MiB
chunks. The board admits it only through its gates: a safe archive, every file as the
manifest says, enough signatures by trusted keys of publishers allowed in the package's
scope, and a name@version that is new (the same digest again changes nothing). A refusal
prints the board's reason, naming the gate, and exits 1. Admins only.`,
		Example: `  board package publish hello-1.0.0.tgz`,
		Args:    cli.Args("FILE"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&sigFile, "sig", "", "the signature file (default FILE.sig.json)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		file := args[0]
		if sigFile == "" {
			sigFile = file + ".sig.json"
		}
		env, err := readBounded(sigFile, packages.MaxEnvelopeBytes)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("--sig: %v: sign the package first (board package sign %s --key KEYFILE), or pass --sig", err, file)
			}
			return fmt.Errorf("--sig: %w", err)
		}
		f, err := os.Open(file)
		if err != nil {
			return pathError(err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return pathError(err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", file)
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		res, err := publish(cmd.Context(), bc, f, file, env, st.Size())
		if err != nil {
			return err
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, protoJSON(res))
		}
		v := res.GetVersion()
		state := "published: new"
		switch {
		case res.GetResigned():
			state = "signed again: the same package, its signatures replaced by these"
		case !res.GetCreated():
			state = "already published with this digest: nothing changed"
		}
		t := cli.Table{Header: []string{"NAME", "VERSION", "DIGEST", "STATE"}}
		t.Append(clip(v.GetName(), 128), clip(v.GetVersion(), 128), v.GetDigest(), state)
		return cli.PrintTable(a.stdout, t)
	}
	return c
}

// publish sends the header, then r in chunks of chunkBytes: size bytes in
// all. It never holds more than one chunk.
func publish(ctx context.Context, bc *boardClient, r io.Reader, file string, env []byte, size int64) (*boardv1.PublishResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a failure here ends the upload: the board keeps nothing
	stream, err := bc.packages.Publish(ctx)
	if err != nil {
		return nil, explainPublish(bc, err, file)
	}
	sendErr := stream.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{Envelope: env, Size: size}}})
	buf := make([]byte, chunkBytes)
	var sent int64
	for sendErr == nil && sent < size {
		n, err := io.ReadFull(r, buf[:min(int64(len(buf)), size-sent)])
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%s: shorter than when publish began (%d bytes, then %d): it changed while being read; nothing was published", file, size, sent+int64(n))
			}
			return nil, pathError(err)
		}
		sent += int64(n)
		sendErr = stream.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: buf[:n]}})
	}
	if sendErr == nil {
		// Nothing may follow what was announced: a file that grew was
		// changed while being read.
		var one [1]byte
		if n, _ := r.Read(one[:]); n > 0 {
			return nil, fmt.Errorf("%s: longer than when publish began (%d bytes): it changed while being read; nothing was published", file, size)
		}
	}
	// A send fails with io.EOF when the board has answered already (a
	// refusal before the end): the answer says why.
	if sendErr != nil && !errors.Is(sendErr, io.EOF) {
		return nil, explainPublish(bc, sendErr, file)
	}
	res, err := stream.CloseAndReceive()
	if err != nil {
		return nil, explainPublish(bc, err, file)
	}
	return res, nil
}

// explainPublish explains a publish's failure: a gate's refusal is the
// board's message, which names the gate.
func explainPublish(bc *boardClient, err error, file string) error {
	ce, ok := errors.AsType[*connect.Error](err)
	if ok && ce.IsRemote() {
		msg := oneLine(sanitize(ce.Message(), false))
		switch ce.Code() {
		case connect.CodePermissionDenied:
			if strings.Contains(msg, "needs role") {
				break // the token's role, not the signatures
			}
			fallthrough
		case connect.CodeInvalidArgument, connect.CodeAlreadyExists, connect.CodeFailedPrecondition, connect.CodeResourceExhausted, connect.CodeAborted:
			return fmt.Errorf("%s: refused: %s", file, dash(msg))
		}
	}
	return bc.explain(err, file)
}

func packageList(a *app) *cobra.Command {
	var out cli.Output
	var limit int
	var scope string
	c := &cobra.Command{
		Use:   "list [--scope SCOPE]",
		Short: "List a running board's library: each package with its newest version not yanked",
		Args:  cli.NoArgs,
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	c.Flags().StringVar(&scope, "scope", "", "only packages in this scope")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		if scope != "" {
			if err := packages.CheckScope(scope); err != nil {
				return cli.Usagef("--scope: %v", err)
			}
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		pkgs, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.PackageSummary, string, error) {
			res, err := bc.packages.ListPackages(cmd.Context(), &boardv1.ListPackagesRequest{PageSize: size, PageToken: token, Scope: scope})
			if err != nil {
				return nil, "", bc.explain(err, "")
			}
			return res.GetPackages(), res.GetNextPageToken(), nil
		})
		if err != nil {
			return err
		}
		t := cli.Table{Header: []string{"NAME", "KIND", "LATEST", "VERSIONS", "UPDATED", "DESCRIPTION"}}
		for _, p := range pkgs {
			t.Append(clip(p.GetName(), 128), clip(p.GetKind(), 20), clip(p.GetLatest(), 40), strconv.Itoa(int(p.GetVersions())), when(p.GetUpdateTime()), clip(p.GetDescription(), 60))
		}
		if err := out.Print(a.stdout, t, protoJSONs(pkgs)); err != nil {
			return err
		}
		a.more(more, limit)
		return nil
	}
	return c
}

func packageShow(a *app) *cobra.Command {
	var out cli.Output
	var limit int
	c := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one package of a running board's library and its versions, newest first, yanked ones included",
		Args:  cli.Args("NAME"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		name := args[0]
		if err := checkLimit(limit); err != nil {
			return err
		}
		if err := packages.CheckName(name); err != nil {
			return cli.Usagef("NAME: %v", strings.TrimPrefix(err.Error(), "packages: "))
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		var summary *boardv1.PackageSummary
		versions, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.PackageVersion, string, error) {
			res, err := bc.packages.GetPackage(cmd.Context(), &boardv1.GetPackageRequest{Name: name, PageSize: size, PageToken: token})
			if err != nil {
				return nil, "", bc.explain(err, name)
			}
			if summary == nil {
				summary = res.GetPackage()
			}
			return res.GetVersions(), res.GetNextPageToken(), nil
		})
		if err != nil {
			return err
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, struct {
				Package  any   `json:"package"`
				Versions []any `json:"versions"`
			}{protoJSON(summary), anys(protoJSONs(versions))})
		}
		card := cli.Table{Header: []string{"FIELD", "VALUE"}}
		card.Append("name", clip(summary.GetName(), 128))
		card.Append("kind", clip(summary.GetKind(), 20))
		card.Append("description", clip(summary.GetDescription(), 200))
		card.Append("latest", clip(summary.GetLatest(), 40))
		card.Append("versions", strconv.Itoa(int(summary.GetVersions())))
		card.Append("updated", when(summary.GetUpdateTime()))
		if err := cli.PrintTable(a.stdout, card); err != nil {
			return err
		}
		fmt.Fprintln(a.stdout)
		t := cli.Table{Header: []string{"VERSION", "DIGEST", "KIND", "SIGNERS", "PUBLISHED BY", "PUBLISHED", "YANKED", "AGENTS"}}
		for _, v := range versions {
			t.Append(clip(v.GetVersion(), 40), v.GetDigest(), clip(v.GetKind(), 20), signers(v.GetSigners()), clip(v.GetPublishedBy(), 40),
				when(v.GetPublishTime()), yanked(v.GetYanked()), agents(v))
		}
		if err := cli.PrintTable(a.stdout, t); err != nil {
			return err
		}
		a.more(more, limit)
		return nil
	}
	return c
}

// anys is s as a []any, for a JSON array.
func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// signers is a version's signers for a table cell: each key id cut to
// its first 12 hex digits (-o json has them whole).
func signers(ids []string) string {
	short := make([]string, len(ids))
	for i, id := range ids {
		short[i] = clip(id, 20)
	}
	return list(short)
}

// yanked is a version's yank for a table cell: "-", or who, when and why.
func yanked(y *boardv1.Yanked) string {
	if y == nil {
		return "-"
	}
	return "by " + clip(y.GetBy(), 40) + " at " + when(y.GetTime()) + ": " + clip(y.GetReason(), 60)
}

// agents is the agents running a version, for a table cell.
func agents(v *boardv1.PackageVersion) string {
	n := int(v.GetAgentCount())
	if n == 0 {
		return "-"
	}
	s := clip(strings.Join(v.GetAgents(), ","), 80)
	if n > len(v.GetAgents()) {
		s += fmt.Sprintf(" (%d in all)", n)
	}
	return s
}

// splitRef reads NAME[@VERSION]; version is "" without one.
func splitRef(ref string, needVersion bool) (name, version string, err error) {
	name, version, hasVersion := strings.Cut(ref, "@")
	if err := packages.CheckName(name); err != nil {
		return "", "", cli.Usagef("%s: %v", refWord(needVersion), strings.TrimPrefix(err.Error(), "packages: "))
	}
	if needVersion && !hasVersion {
		return "", "", cli.Usagef("NAME@VERSION: %q has no version: name one, such as %s@1.0.0", clip(ref, 80), name)
	}
	if hasVersion {
		if err := packages.CheckVersion(version); err != nil {
			return "", "", cli.Usagef("%s: %v", refWord(needVersion), strings.TrimPrefix(err.Error(), "packages: "))
		}
	}
	return name, version, nil
}

func refWord(needVersion bool) string {
	if needVersion {
		return "NAME@VERSION"
	}
	return "NAME[@VERSION]"
}

func packageYank(a *app) *cobra.Command {
	var out cli.Output
	var reason string
	c := &cobra.Command{
		Use:   "yank NAME@VERSION --reason TEXT",
		Short: "Hide a version from new installs; it stays downloadable by its digest",
		Long: `Yank hides one version of a package from new installs: it is no longer the newest of its
name, and naming it by version is refused, but it stays downloadable by its digest, and
agents that run it are not told anything. Yanking a yanked version changes nothing and
keeps the first reason. Admins only.`,
		Example: `  board package yank acme/hello@1.0.0 --reason "leaks the customer's name in its summary"`,
		Args:    cli.Args("NAME@VERSION"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&reason, "reason", "", fmt.Sprintf("why; required, at most %d bytes", maxReasonBytes))
	c.RunE = func(cmd *cobra.Command, args []string) error {
		name, version, err := splitRef(args[0], true)
		if err != nil {
			return err
		}
		if err := checkReason(reason); err != nil {
			return err
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		res, err := bc.packages.Yank(cmd.Context(), &boardv1.YankRequest{Name: name, Version: version, Reason: reason})
		if err != nil {
			return bc.explain(err, args[0])
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, protoJSON(res.GetVersion()))
		}
		v := res.GetVersion()
		_, err = fmt.Fprintf(a.stdout, "%s@%s (%s) yanked %s\n", clip(v.GetName(), 128), clip(v.GetVersion(), 128), v.GetDigest(), yanked(v.GetYanked()))
		return err
	}
	return c
}

func packageDownload(a *app) *cobra.Command {
	var out cli.Output
	var digest, file string
	c := &cobra.Command{
		Use:   "download (NAME[@VERSION] | --digest DIGEST) [--out FILE]",
		Short: "Fetch a version from a running board's library, check it, and write FILE and FILE.sig.json",
		Long: `Download fetches one version: NAME@VERSION, NAME alone (its newest version not yanked), or
--digest (any version, yanked or not). It checks what arrived before keeping it: a safe
archive whose digest is the one the board's record names, and signatures that reach the
threshold of the keys its scope trusts now. It writes FILE (default NAME-VERSION.tgz, NAME
the part after the slash) and FILE.sig.json beside it, so board package verify FILE
--trust … checks it again offline, and never replaces a file.`,
		Example: `  board package download acme/hello@1.0.0
  board package download --digest sha256:5e0c… --out hello.tgz`,
		Args: cli.MaxArgs("NAME[@VERSION]"),
	}
	co := clientFlags(c.Flags())
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&digest, "digest", "", "the version with this digest (sha256:…), yanked or not")
	c.Flags().StringVar(&file, "out", "", "the file to write (it must not exist); the signatures go to FILE.sig.json")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		req := &boardv1.DownloadRequest{Digest: digest}
		if len(args) == 1 {
			var err error
			if req.Name, req.Version, err = splitRef(args[0], false); err != nil {
				return err
			}
		} else if digest == "" {
			return cli.Usagef("package download: want NAME[@VERSION] or --digest (see %s --help)", cmd.CommandPath())
		}
		if digest != "" {
			if err := packages.CheckDigest(digest); err != nil {
				return cli.Usagef("--digest: %v", err)
			}
		}
		if file != "" {
			if err := notThere(file); err != nil {
				return err
			}
		}
		bc, err := a.dial(co)
		if err != nil {
			return err
		}
		d, err := download(cmd.Context(), bc, req, file)
		if err != nil {
			return err
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, d)
		}
		v := d.head.GetVersion()
		t := cli.Table{Header: []string{"FIELD", "VALUE"}}
		t.Append("file", d.File)
		t.Append("signatures", d.SigFile)
		t.Append("name", clip(v.GetName(), 128))
		t.Append("version", clip(v.GetVersion(), 128))
		t.Append("digest", v.GetDigest())
		t.Append("yanked", yanked(v.GetYanked()))
		t.Append("checked", d.Checked)
		if err := cli.PrintTable(a.stdout, t); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "board: check it again offline: board package verify %s%s --threshold %d\n", d.File, trustFlags(d.head.GetTrust()), d.head.GetTrust().GetThreshold())
		return nil
	}
	return c
}

// downloaded is what package download wrote, as -o json prints it.
type downloaded struct {
	File    string `json:"file"`
	SigFile string `json:"sig_file"`
	Version any    `json:"version"`
	Trust   any    `json:"trust"`
	Checked string `json:"checked"`
	head    *boardv1.DownloadHead
}

// trustFlags is --trust for each key of t.
func trustFlags(t *boardv1.Trust) string {
	var b strings.Builder
	for _, k := range t.GetKeys() {
		b.WriteString(" --trust " + k.GetPublicKey())
	}
	return b.String()
}

// notThere refuses a file that exists, or whose signature file does.
func notThere(file string) error {
	for _, f := range []string{file, file + ".sig.json"} {
		if _, err := os.Lstat(f); err == nil {
			return fmt.Errorf("%s exists: download never replaces a file; remove it or choose another --out", f)
		}
	}
	return nil
}

// download receives the version req names into a temporary file beside
// the target, checks it, then puts the file and its signatures in place,
// neither replacing anything.
func download(ctx context.Context, bc *boardClient, req *boardv1.DownloadRequest, file string) (*downloaded, error) {
	// What the board's messages start with, so explain does not say it
	// twice.
	what := req.GetName()
	if req.GetVersion() != "" {
		what += "@" + req.GetVersion()
	}
	if what == "" {
		what = req.GetDigest()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := bc.packages.Download(ctx, req)
	if err != nil {
		return nil, bc.explain(err, what)
	}
	defer stream.Close()
	first, err := stream.Receive()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the board ended the download before saying what it is", what)
		}
		return nil, bc.explain(err, what)
	}
	head := first.GetHead()
	v := head.GetVersion()
	if head == nil || v == nil {
		return nil, fmt.Errorf("%s: the board's first message is not the download's head", what)
	}
	switch {
	case req.GetName() != "" && v.GetName() != req.GetName(),
		req.GetVersion() != "" && v.GetVersion() != req.GetVersion(),
		req.GetDigest() != "" && v.GetDigest() != req.GetDigest():
		return nil, fmt.Errorf("%s: the board sent another version (%s@%s, %s)", what, clip(v.GetName(), 128), clip(v.GetVersion(), 128), clip(v.GetDigest(), 80))
	case v.GetSize() < 0 || v.GetSize() > maxDownloadBytes:
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a download takes", what, v.GetSize(), maxDownloadBytes)
	}
	if file == "" {
		_, short, _ := strings.Cut(v.GetName(), "/")
		file = short + "-" + v.GetVersion() + ".tgz"
		if err := packages.CheckName(v.GetName()); err != nil || packages.CheckVersion(v.GetVersion()) != nil {
			return nil, fmt.Errorf("%s: the board named it %q, which is no file name: pass --out", what, clip(v.GetName()+"@"+v.GetVersion(), 128))
		}
		if err := notThere(file); err != nil {
			return nil, err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return nil, pathError(err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var got int64
	for {
		msg, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bc.explain(err, what)
		}
		chunk := msg.GetChunk()
		if got += int64(len(chunk)); got > v.GetSize() {
			return nil, fmt.Errorf("%s: the board sent more than the %d bytes its record says", what, v.GetSize())
		}
		if _, err := tmp.Write(chunk); err != nil {
			return nil, pathError(err)
		}
	}
	if got != v.GetSize() {
		return nil, fmt.Errorf("%s: the board sent %d bytes, its record says %d", what, got, v.GetSize())
	}
	if err := tmp.Chmod(0o644); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, pathError(err)
	}
	checked, err := checkDownload(tmp.Name(), head, req)
	if err != nil {
		return nil, fmt.Errorf("%s: not kept: %w", what, err)
	}
	sigFile := file + ".sig.json"
	if err := writeNew(sigFile, head.GetEnvelope(), 0o644); err != nil {
		return nil, pathError(err)
	}
	// A link never replaces a file, where a rename would.
	if err := os.Link(tmp.Name(), file); err != nil {
		os.Remove(sigFile)
		return nil, pathError(err)
	}
	return &downloaded{File: file, SigFile: sigFile, Version: protoJSON(v), Trust: protoJSON(head.GetTrust()), Checked: checked, head: head}, nil
}

// checkDownload checks a downloaded archive against its head with the
// checks an install makes (library.Verify): the record is what was asked
// for, a safe archive, its manifest the record's, its digest the record's
// (and the one asked for), and signatures reaching the threshold of the
// keys its scope trusts now. It says what held.
func checkDownload(path string, head *boardv1.DownloadHead, req *boardv1.DownloadRequest) (string, error) {
	v := head.GetVersion()
	f, err := os.Open(path)
	if err != nil {
		return "", pathError(err)
	}
	defer f.Close()
	ref := library.Ref{Name: v.GetName(), Version: req.GetVersion()}
	if req.GetName() != "" {
		ref.Name = req.GetName()
	}
	got, err := library.Verify(head, f, ref, packages.Kind(v.GetKind()), req.GetDigest(), packages.Limits{})
	if err != nil {
		return "", err
	}
	trust := head.GetTrust()
	return fmt.Sprintf("a safe archive, the record's digest, signed by %d of the keys scope %s trusts now (threshold %d)",
		len(got.Signers), clip(trust.GetScope(), 63), trust.GetThreshold()), nil
}
