package board

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/packageversion"
	"github.com/symphonix/symphonix/packages"
)

// The library keeps every published archive in the store, in chunks of
// MaxChunkBytes keyed by the package digest (package_chunks), and one row
// a version (package_versions) with its manifest and signature envelope.
// A version enters only through Publish's gates (library_publish.go) and
// never changes afterwards but to be yanked (library_yank.go).
// docs/library.md says how.

// MaxChunkBytes is the most of an archive one Publish or Download message
// carries, and the size of the pieces the library stores it in.
const MaxChunkBytes = 1 << 20

// chunkFraming is room for what a message carrying a chunk adds to it: the
// field's tag and length.
const chunkFraming = 16

// Bounds of the library's requests (docs/limits.md).
const (
	// maxYankReason is the longest reason a yank keeps, in bytes.
	maxYankReason = 1024
)

// listedVersionFields are the columns a list reads of a version: all but
// the manifest and the envelope, which can be large.
var listedVersionFields = []string{
	packageversion.FieldName, packageversion.FieldScope, packageversion.FieldVersion,
	packageversion.FieldDigest, packageversion.FieldKind, packageversion.FieldDescription,
	packageversion.FieldSize, packageversion.FieldFiles, packageversion.FieldSigners,
	packageversion.FieldPublishedBy, packageversion.FieldPublishedAt,
	packageversion.FieldYankedAt, packageversion.FieldYankedBy, packageversion.FieldYankReason,
}

// versionProto is a stored version as the API shows it, with the agents
// that run it. Its requires come from the manifest when the row holds it
// (rows read with listedVersionFields do not).
func versionProto(row *ent.PackageVersion, run running) *boardv1.PackageVersion {
	v := &boardv1.PackageVersion{
		Name:        row.Name,
		Version:     row.Version,
		Digest:      row.Digest,
		Kind:        row.Kind,
		Description: row.Description,
		Size:        row.Size,
		Files:       int32(row.Files),
		Signers:     append([]string{}, row.Signers...),
		PublishedBy: row.PublishedBy,
		PublishTime: timestamppb.New(row.PublishedAt),
		Agents:      append([]string{}, run.names...),
		AgentCount:  int32(run.count),
	}
	if row.YankedAt != nil {
		v.Yanked = &boardv1.Yanked{By: row.YankedBy, Time: timestamppb.New(*row.YankedAt), Reason: row.YankReason}
	}
	if len(row.Manifest) > 0 {
		// Only the requires: the manifest's file list can be long.
		var m struct {
			Requires packages.Requires `json:"requires"`
		}
		if err := json.Unmarshal(row.Manifest, &m); err == nil {
			v.Requires = &boardv1.PackageRequires{
				McpServers: append([]string{}, m.Requires.MCP...),
				Inputs:     append([]string{}, m.Requires.Inputs...),
				Secrets:    append([]string{}, m.Requires.Secrets...),
			}
		}
	}
	return v
}

// newerFirst orders versions of one package newest first: by semantic
// version precedence, and two that differ only in build metadata by
// their text, so that the order is total.
func newerFirst(a, b string) int {
	if c := packages.CompareVersions(b, a); c != 0 {
		return c
	}
	return bytes.Compare([]byte(b), []byte(a))
}

// checkNameField checks a request's "scope/name" field.
func checkNameField(field, name string) error {
	if name == "" {
		return connect.Errorf(connect.CodeInvalidArgument, "%s: required", field)
	}
	if err := packages.CheckName(name); err != nil {
		return connect.Errorf(connect.CodeInvalidArgument, "%s: %v", field, err)
	}
	return nil
}

// checkVersionField checks a request's version field.
func checkVersionField(field, v string) error {
	if v == "" {
		return connect.Errorf(connect.CodeInvalidArgument, "%s: required", field)
	}
	if err := packages.CheckVersion(v); err != nil {
		return connect.Errorf(connect.CodeInvalidArgument, "%s: %v", field, err)
	}
	return nil
}

// checkDigestField checks a request's digest field.
func checkDigestField(field, d string) error {
	if err := packages.CheckDigest(d); err != nil {
		return connect.Errorf(connect.CodeInvalidArgument, "%s: %v", field, err)
	}
	return nil
}

// scopeOf is the scope of a name CheckName passed.
func scopeOf(name string) string {
	for i := range len(name) {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return name
}

// runningOne is what agentsRunning says of one digest.
func (b *Board) runningOne(ctx context.Context, digest string) (running, error) {
	m, err := b.agentsRunning(ctx, []string{digest})
	if err != nil {
		return running{}, fmt.Errorf("agents running %s: %w", digest, err)
	}
	return m[digest], nil
}
