package board

import (
	"context"
	"slices"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/packageversion"
	"github.com/symphonix/symphonix/packages"
)

// ListPackages is a page of packages by name. A page reads the names it
// may hold (one more, to know whether more follow), then their versions'
// listed fields, never a manifest or an envelope; its token holds the last
// name sent.
func (s packageService) ListPackages(ctx context.Context, req *boardv1.ListPackagesRequest) (*boardv1.ListPackagesResponse, error) {
	b := s.b
	scope := req.GetScope()
	if scope != "" {
		if err := packages.CheckScope(scope); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "scope: %v", err)
		}
	}
	pg, err := b.page("ListPackages", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1, scope)
	if err != nil {
		return nil, err
	}
	q := b.db.PackageVersion.Query()
	if after := pg.afterName(); after != "" {
		q = q.Where(packageversion.NameGT(after))
	}
	if scope != "" {
		q = q.Where(packageversion.Scope(scope))
	}
	names, err := q.Unique(true).Order(ent.Asc(packageversion.FieldName)).Limit(pg.budget.max + 1).
		Select(packageversion.FieldName).Strings(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := b.db.PackageVersion.Query().Where(packageversion.NameIn(names...)).
		Select(listedVersionFields...).All(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string][]*ent.PackageVersion, len(names))
	for _, r := range rows {
		byName[r.Name] = append(byName[r.Name], r)
	}
	res := &boardv1.ListPackagesResponse{Packages: []*boardv1.PackageSummary{}}
	for _, name := range names {
		sum := summarize(byName[name])
		if !pg.take(sum, name) {
			break
		}
		res.Packages = append(res.Packages, sum)
	}
	res.NextPageToken = pg.next()
	return res, nil
}

// GetPackage is one package and a page of its versions, newest first. A
// page sorts the versions' listed fields, then reads the manifest of each
// one it holds, one at a time; its token holds the last version sent.
func (s packageService) GetPackage(ctx context.Context, req *boardv1.GetPackageRequest) (*boardv1.GetPackageResponse, error) {
	b := s.b
	name := req.GetName()
	if err := checkNameField("name", name); err != nil {
		return nil, err
	}
	pg, err := b.page("GetPackage", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1, name)
	if err != nil {
		return nil, err
	}
	var after string
	if pg.after != nil {
		after = pg.after[0]
		if packages.CheckVersion(after) != nil {
			return nil, errMalformedToken
		}
	}
	rows, err := b.db.PackageVersion.Query().Where(packageversion.Name(name)).
		Select(append([]string{packageversion.FieldID}, listedVersionFields...)...).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, connect.Errorf(connect.CodeNotFound, "name: %s is not in the library", name)
	}
	res := &boardv1.GetPackageResponse{Package: summarize(rows), Versions: []*boardv1.PackageVersion{}}
	slices.SortFunc(rows, func(a, b *ent.PackageVersion) int { return newerFirst(a.Version, b.Version) })
	var page []*ent.PackageVersion
	for _, r := range rows {
		if after != "" && newerFirst(r.Version, after) <= 0 {
			continue
		}
		page = append(page, r)
		if len(page) > pg.budget.max {
			break
		}
	}
	digests := make([]string, len(page))
	for i, r := range page {
		digests[i] = r.Digest
	}
	run, err := b.agentsRunning(ctx, digests)
	if err != nil {
		return nil, err
	}
	for _, r := range page {
		// One manifest at a time: each can be megabytes.
		m, err := b.db.PackageVersion.Query().Where(packageversion.ID(r.ID)).
			Select(packageversion.FieldManifest).Only(ctx)
		if err != nil {
			return nil, err
		}
		r.Manifest = m.Manifest
		v := versionProto(r, run[r.Digest])
		r.Manifest = nil
		if !pg.take(v, r.Version) {
			break
		}
		res.Versions = append(res.Versions, v)
	}
	res.NextPageToken = pg.next()
	return res, nil
}

// summarize is a package as a list shows it, from all its versions: the
// kind and description of its newest version not yanked (of its newest
// when every one is).
func summarize(rows []*ent.PackageVersion) *boardv1.PackageSummary {
	var newest, latest *ent.PackageVersion
	sum := &boardv1.PackageSummary{Versions: int32(len(rows))}
	for _, r := range rows {
		if newest == nil || newerFirst(r.Version, newest.Version) < 0 {
			newest = r
		}
		if r.YankedAt == nil && (latest == nil || newerFirst(r.Version, latest.Version) < 0) {
			latest = r
		}
		if t := timestamppb.New(r.PublishedAt); sum.UpdateTime == nil || r.PublishedAt.After(sum.UpdateTime.AsTime()) {
			sum.UpdateTime = t
		}
	}
	if newest == nil {
		return sum
	}
	shown := newest
	if latest != nil {
		shown = latest
		sum.Latest = latest.Version
	}
	sum.Name, sum.Kind, sum.Description = shown.Name, shown.Kind, shown.Description
	return sum
}
