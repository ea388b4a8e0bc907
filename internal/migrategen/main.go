// Command migrategen writes the store's versioned migrations: one SQL file
// per dialect in store/migrations/postgres and store/migrations/sqlite for
// whatever ent/schema has that the files before it do not, with Atlas's
// atlas.sum beside them. It runs from ent's go:generate line, after ent's
// own generation, so `go generate ./ent` is the one command; with nothing
// changed it writes nothing.
//
// Neither dialect needs a server. SQLite's current state is the directory
// replayed on an in-memory database (ent's replay mode); PostgreSQL's is
// store/migrations/postgres.hcl, the Atlas HCL of the schema the directory
// makes, rewritten with each new migration, and the new migration is
// Atlas's plan from that state to ent/schema's. store's tests apply both
// directories to real databases and check that ent/schema and the result
// do not differ, so a state file out of step with its directory fails
// there.
//
// See docs/migrations.md.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/postgres"
	atlas "ariga.io/atlas/sql/schema"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	entschema "entgo.io/ent/dialect/sql/schema"
	_ "modernc.org/sqlite" // the in-memory SQLite the sqlite directory is replayed on

	entmigrate "github.com/symphonix/symphonix/ent/migrate"
)

// postgresVersion is the PostgreSQL the postgres migrations are planned
// for (server_version_num): the oldest the board supports.
const postgresVersion = "130000"

// maxNameTables is how many table names a migration's name lists before
// "and_more".
const maxNameTables = 3

func main() {
	dir := flag.String("dir", "store/migrations", "the folder of the migration directories")
	rehash := flag.Bool("rehash", false, "rewrite each directory's atlas.sum from its files first (after writing or fixing a migration by hand)")
	flag.Parse()
	if err := run(context.Background(), *dir, *rehash); err != nil {
		fmt.Fprintln(os.Stderr, "migrategen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root string, rehash bool) error {
	pgDir, err := localDir(filepath.Join(root, "postgres"), rehash)
	if err != nil {
		return err
	}
	liteDir, err := localDir(filepath.Join(root, "sqlite"), rehash)
	if err != nil {
		return err
	}
	version := migrate.NewVersion()
	name, err := writePostgres(ctx, pgDir, filepath.Join(root, "postgres.hcl"), version)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := writeSQLite(ctx, liteDir, version, name); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// localDir opens (making it if need be) a migration directory and checks
// its atlas.sum, or rewrites it when rehash.
func localDir(path string, rehash bool) (*migrate.LocalDir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	d, err := migrate.NewLocalDir(path)
	if err != nil {
		return nil, err
	}
	files, err := d.Files()
	if err != nil {
		return nil, err
	}
	if rehash || len(files) == 0 {
		sum, err := migrate.NewHashFile(files)
		if err != nil {
			return nil, err
		}
		if err := migrate.WriteSumFile(d, sum); err != nil {
			return nil, err
		}
	}
	if err := migrate.Validate(d); err != nil {
		return nil, fmt.Errorf("%s: %w (a migration written or edited by hand: run go run ./internal/migrategen -dir store/migrations -rehash)", path, err)
	}
	return d, nil
}

// formatter names a migration VERSION_NAME.sql, the same version for both
// dialects, and writes Atlas's default content.
func formatter(version string) migrate.Formatter {
	return migrate.TemplateFormatter{{
		N: template.Must(template.New("").Parse(version + "{{ with .Name }}_{{ . }}{{ end }}.sql")),
		C: migrate.DefaultFormatter[0].C,
	}}
}

// writePostgres plans the changes from postgres.hcl's state to ent/schema's
// and writes them as a migration, and the new state; it returns the
// migration's name, "" when there was nothing to write.
func writePostgres(ctx context.Context, dir *migrate.LocalDir, statePath, version string) (string, error) {
	// ent links each table's columns, keys and indexes when it plans; its
	// offline DDL does the same for the tables it is given, and nothing
	// else that is exported does.
	if _, err := entschema.DDL(ctx, entschema.DDLArgs{Dialect: dialect.Postgres, Version: postgresVersion, HashSymbols: true, Tables: entmigrate.Tables}); err != nil {
		return "", err
	}
	m, err := entschema.NewMigrate(offlinePostgres{})
	if err != nil {
		return "", err
	}
	realm, err := m.StateReader(entmigrate.Tables...).ReadState(ctx)
	if err != nil {
		return "", err
	}
	if len(realm.Schemas) != 1 {
		return "", fmt.Errorf("ent/schema has %d schemas, want 1", len(realm.Schemas))
	}
	realm.Schemas[0].Name = "public"
	defaultIdentities(realm.Schemas[0])
	state, err := postgres.MarshalHCL(realm.Schemas[0])
	if err != nil {
		return "", err
	}
	// Both states are read back from HCL, so that they compare as equals
	// where they are.
	desired, err := readState(state)
	if err != nil {
		return "", fmt.Errorf("ent/schema's state: %w", err)
	}
	current := atlas.New("public")
	files, err := dir.Files()
	if err != nil {
		return "", err
	}
	if len(files) > 0 {
		b, err := os.ReadFile(statePath)
		if err != nil {
			return "", fmt.Errorf("the state of the migrations there: %w", err)
		}
		if current, err = readState(b); err != nil {
			return "", fmt.Errorf("%s: %w", statePath, err)
		}
	}
	changes, err := postgres.DefaultDiff.SchemaDiff(current, desired)
	if err != nil {
		return "", err
	}
	changes = additive(changes)
	if len(changes) == 0 {
		return "", nil
	}
	name := "baseline"
	if len(files) > 0 {
		name = nameOf(changes)
	}
	noQualifier := ""
	plan, err := postgres.DefaultPlan.PlanChanges(ctx, name, changes, func(o *migrate.PlanOptions) { o.SchemaQualifier = &noQualifier })
	if err != nil {
		return "", err
	}
	if err := migrate.NewPlanner(nil, dir, migrate.PlanFormat(formatter(version))).WritePlan(plan); err != nil {
		return "", err
	}
	return name, os.WriteFile(statePath, state, 0o644)
}

// defaultIdentities spells out the identity columns ent leaves to Atlas's
// defaults (GENERATED BY DEFAULT, starting at 1 by 1), so that they are
// written to the state as Atlas reads them back.
func defaultIdentities(s *atlas.Schema) {
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			for _, a := range c.Attrs {
				id, ok := a.(*postgres.Identity)
				if !ok {
					continue
				}
				if id.Generation == "" {
					id.Generation = postgres.GeneratedTypeByDefault
				}
				if id.Sequence == nil {
					id.Sequence = &postgres.Sequence{Start: 1, Increment: 1}
				}
			}
		}
	}
}

// readState reads an Atlas HCL document of one schema.
func readState(b []byte) (*atlas.Schema, error) {
	var r atlas.Realm
	if err := postgres.EvalHCLBytes(b, &r, nil); err != nil {
		return nil, err
	}
	if len(r.Schemas) != 1 {
		return nil, fmt.Errorf("%d schemas, want 1", len(r.Schemas))
	}
	return r.Schemas[0], nil
}

// additive keeps what ent's own planner keeps by default: new tables and
// changes to tables, without dropping a table, a column or an index. A
// drop loses data, so it is written by hand (docs/migrations.md).
func additive(changes []atlas.Change) []atlas.Change {
	var out []atlas.Change
	for _, c := range changes {
		switch c := c.(type) {
		case *atlas.AddTable:
			out = append(out, c)
		case *atlas.ModifyTable:
			var kept []atlas.Change
			for _, tc := range c.Changes {
				switch tc.(type) {
				case *atlas.DropColumn, *atlas.DropIndex:
				default:
					kept = append(kept, tc)
				}
			}
			if len(kept) > 0 {
				c.Changes = kept
				out = append(out, c)
			}
		}
	}
	return out
}

// nameOf names a migration by the tables it adds or changes:
// add_eval_scores, change_agents_runs.
func nameOf(changes []atlas.Change) string {
	var added, changed []string
	for _, c := range changes {
		switch c := c.(type) {
		case *atlas.AddTable:
			added = append(added, c.T.Name)
		case *atlas.ModifyTable:
			changed = append(changed, c.T.Name)
		}
	}
	var parts []string
	for _, p := range []struct {
		verb   string
		tables []string
	}{{"add", added}, {"change", changed}} {
		if len(p.tables) == 0 {
			continue
		}
		ts := p.tables
		if len(ts) > maxNameTables {
			ts = append(ts[:maxNameTables:maxNameTables], "and_more")
		}
		parts = append(parts, p.verb+"_"+strings.Join(ts, "_"))
	}
	return strings.Join(parts, "_")
}

// writeSQLite replays the sqlite directory on an in-memory database and
// writes what ent/schema has beyond it as a migration.
func writeSQLite(ctx context.Context, dir *migrate.LocalDir, version, name string) error {
	db, err := sql.Open("sqlite", "file:migrategen?mode=memory&_pragma=foreign_keys(1)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // each connection to mode=memory is a database of its own
	files, err := dir.Files()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		name = "baseline"
	} else if name == "" {
		name = "changes"
	}
	err = entmigrate.NewSchema(entsql.OpenDB(dialect.SQLite, db)).NamedDiff(ctx, name,
		entschema.WithDir(dir),
		entschema.WithMigrationMode(entschema.ModeReplay),
		entschema.WithFormatter(formatter(version)),
		entschema.WithErrNoPlan(true),
	)
	if errors.Is(err, migrate.ErrNoPlan) {
		return nil
	}
	return err
}

// offlinePostgres is the one thing ent asks a PostgreSQL server when it
// describes ent/schema in Atlas's terms: its version.
type offlinePostgres struct{}

func (offlinePostgres) Query(_ context.Context, query string, _, v any) error {
	rows, ok := v.(*entsql.Rows)
	if !ok || query != "SHOW server_version_num" {
		return fmt.Errorf("no PostgreSQL server to ask %q", query)
	}
	*rows = entsql.Rows{ColumnScanner: &versionRow{}}
	return nil
}

func (offlinePostgres) Exec(_ context.Context, query string, _, _ any) error {
	return fmt.Errorf("no PostgreSQL server to run %q", query)
}

func (offlinePostgres) Tx(context.Context) (dialect.Tx, error) {
	return nil, errors.New("no PostgreSQL server for a transaction")
}

func (offlinePostgres) Close() error    { return nil }
func (offlinePostgres) Dialect() string { return dialect.Postgres }

// versionRow is the one row of SHOW server_version_num.
type versionRow struct{ done bool }

func (r *versionRow) Next() bool {
	if r.done {
		return false
	}
	r.done = true
	return true
}

func (r *versionRow) Scan(dest ...any) error {
	if len(dest) != 1 {
		return fmt.Errorf("scan %d columns of 1", len(dest))
	}
	p, ok := dest[0].(*string)
	if !ok {
		return fmt.Errorf("scan into %T", dest[0])
	}
	*p = postgresVersion
	return nil
}

func (r *versionRow) Columns() ([]string, error)              { return []string{"server_version_num"}, nil }
func (r *versionRow) ColumnTypes() ([]*sql.ColumnType, error) { return nil, nil }
func (r *versionRow) Close() error                            { return nil }
func (r *versionRow) Err() error                              { return nil }
func (r *versionRow) NextResultSet() bool                     { return false }
