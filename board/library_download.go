package board

import (
	"context"
	"fmt"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/packagechunk"
	"github.com/symphonix/symphonix/ent/packageversion"
)

// Download sends the head (the version, its envelope, its scope's trust
// now), then the archive as it is stored, one chunk at a time: the board
// holds one chunk of a download in memory, never the archive.
func (s packageService) Download(ctx context.Context, req *boardv1.DownloadRequest, stream boardv1connect.PackageServiceDownloadServerStream) error {
	b := s.b
	row, err := b.downloadable(ctx, req)
	if err != nil {
		return err
	}
	trust, err := b.trustOf(ctx, b.db, row.Scope)
	if err != nil {
		return err
	}
	run, err := b.runningOne(ctx, row.Digest)
	if err != nil {
		return err
	}
	head := &boardv1.DownloadHead{Version: versionProto(row, run), Envelope: row.Envelope, Trust: trust.proto()}
	if err := stream.Send(&boardv1.DownloadResponse{Part: &boardv1.DownloadResponse_Head{Head: head}}); err != nil {
		return err
	}
	var sent int64
	for seq := 0; sent < row.Size; seq++ {
		c, err := b.db.PackageChunk.Query().
			Where(packagechunk.Digest(row.Digest), packagechunk.Seq(seq)).
			Only(ctx)
		if err != nil {
			return fmt.Errorf("download %s: chunk %d: %w", row.Digest, seq, err)
		}
		if len(c.Data) == 0 || sent+int64(len(c.Data)) > row.Size {
			return fmt.Errorf("download %s: chunk %d: %d bytes after %d of %d", row.Digest, seq, len(c.Data), sent, row.Size)
		}
		if err := stream.Send(&boardv1.DownloadResponse{Part: &boardv1.DownloadResponse_Chunk{Chunk: c.Data}}); err != nil {
			return err
		}
		sent += int64(len(c.Data))
	}
	return nil
}

// downloadable is the version a DownloadRequest names, checked as the
// RPC's doc says: by digest (yanked or not, name and version agreeing
// when given), by name and version (not yanked), or by name alone (its
// newest not yanked).
func (b *Board) downloadable(ctx context.Context, req *boardv1.DownloadRequest) (*ent.PackageVersion, error) {
	name, version, digest := req.GetName(), req.GetVersion(), req.GetDigest()
	if name != "" {
		if err := checkNameField("name", name); err != nil {
			return nil, err
		}
	}
	if version != "" {
		if err := checkVersionField("version", version); err != nil {
			return nil, err
		}
	}
	if digest != "" {
		if err := checkDigestField("digest", digest); err != nil {
			return nil, err
		}
	}
	switch {
	case name == "" && digest == "":
		return nil, connect.NewError(connect.CodeInvalidArgument, "name: required, or digest: name a version by name, name and version, or digest")
	case version != "" && name == "" && digest == "":
		return nil, connect.NewError(connect.CodeInvalidArgument, "name: required with version")
	}

	if digest != "" {
		row, err := b.db.PackageVersion.Query().Where(packageversion.Digest(digest)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, connect.Errorf(connect.CodeNotFound, "digest: %s is not in the library", digest)
		}
		if err != nil {
			return nil, err
		}
		if name != "" && row.Name != name {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "name: %s is the digest of %s, not of %s", digest, row.Name, name)
		}
		if version != "" && row.Version != version {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "version: %s is the digest of %s@%s, not of version %s", digest, row.Name, row.Version, version)
		}
		return row, nil
	}

	if version != "" {
		row, err := b.db.PackageVersion.Query().Where(packageversion.Name(name), packageversion.Version(version)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, connect.Errorf(connect.CodeNotFound, "%s@%s is not in the library", name, version)
		}
		if err != nil {
			return nil, err
		}
		if row.YankedAt != nil {
			return nil, connect.Errorf(connect.CodeFailedPrecondition,
				"%s@%s was yanked (%s): it is hidden from new installs; to download it anyway, name it by its digest, %s",
				name, version, quoted(row.YankReason), row.Digest)
		}
		return row, nil
	}

	rows, err := b.db.PackageVersion.Query().
		Where(packageversion.Name(name), packageversion.YankedAtIsNil()).
		Select(packageversion.FieldID, packageversion.FieldVersion).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		n, err := b.db.PackageVersion.Query().Where(packageversion.Name(name)).Count(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, connect.Errorf(connect.CodeNotFound,
				"%s: every version is yanked: name one by its digest to download it anyway (GetPackage lists them)", name)
		}
		return nil, connect.Errorf(connect.CodeNotFound, "%s is not in the library", name)
	}
	newest := rows[0]
	for _, r := range rows[1:] {
		if newerFirst(r.Version, newest.Version) < 0 {
			newest = r
		}
	}
	return b.db.PackageVersion.Get(ctx, newest.ID)
}
