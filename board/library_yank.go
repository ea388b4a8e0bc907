package board

import (
	"context"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/packageversion"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Yank marks one version yanked, with who, when and why, and audits it.
// A version yanked already is left as it is: the first reason stays, and
// nothing is audited again.
func (s packageService) Yank(ctx context.Context, req *boardv1.YankRequest) (*boardv1.YankResponse, error) {
	b := s.b
	name, version, reason := req.GetName(), req.GetVersion(), req.GetReason()
	if err := checkNameField("name", name); err != nil {
		return nil, err
	}
	if err := checkVersionField("version", version); err != nil {
		return nil, err
	}
	switch {
	case reason == "":
		return nil, connect.NewError(connect.CodeInvalidArgument, "reason: required: say why the version is yanked")
	case len(reason) > maxYankReason:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "reason: %d bytes, at most %d", len(reason), maxYankReason)
	case !utf8.ValidString(reason):
		return nil, connect.NewError(connect.CodeInvalidArgument, "reason: not UTF-8")
	}
	actor := identity.ActorOf(ctx, "")
	now := b.now().UTC().Truncate(time.Microsecond)
	var row *ent.PackageVersion
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		var err error
		row, err = tx.PackageVersion.Query().
			Where(packageversion.Name(name), packageversion.Version(version), store.ForUpdate).
			Only(ctx)
		if ent.IsNotFound(err) {
			return connect.Errorf(connect.CodeNotFound, "%s@%s is not in the library", name, version)
		}
		if err != nil || row.YankedAt != nil {
			return err
		}
		row, err = row.Update().SetYankedAt(now).SetYankedBy(actor).SetYankReason(reason).Save(ctx)
		if err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor:   actor,
			Action:  "package.yank",
			Subject: name + "@" + version,
			Detail:  map[string]any{"digest": row.Digest, "reason": reason},
			At:      now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	run, err := b.runningOne(ctx, row.Digest)
	if err != nil {
		return nil, err
	}
	return &boardv1.YankResponse{Version: versionProto(row, run)}, nil
}
