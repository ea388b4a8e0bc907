package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	entschema "entgo.io/ent/dialect/sql/schema"
	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/ent"
	entmigrate "github.com/symphonix/symphonix/ent/migrate"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// storeKind is one of the two dialects, with a fresh store of it.
type storeKind struct {
	name  string
	fresh func(t *testing.T) (dsn string, db *sql.DB)
}

var kinds = []storeKind{
	{"sqlite", func(t *testing.T) (string, *sql.DB) {
		path := filepath.Join(t.TempDir(), "board.db")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return path, db
	}},
	{"postgres", func(t *testing.T) (string, *sql.DB) {
		dsn := boardtest.PostgresDSN(t)
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return dsn, db
	}},
}

func (k storeKind) dialect() string {
	if k.name == "postgres" {
		return dialect.Postgres
	}
	return dialect.SQLite
}

// migrationFiles are the names of a dialect's migration files, in order.
func migrationFiles(t *testing.T, dialect string) []string {
	t.Helper()
	d := "sqlite"
	if dialect == "postgres" {
		d = "postgres"
	}
	dir, err := atlasmigrate.NewLocalDir(filepath.Join("migrations", d))
	if err != nil {
		t.Fatal(err)
	}
	files, err := dir.Files()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Version())
	}
	return names
}

// revisions are the versions the revisions table holds, with how many
// rows each has.
func revisions(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT version, count(*) FROM `+store.RevisionsTable+` GROUP BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var v string
		var n int
		if err := rows.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		got[v] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func once(versions []string) map[string]int {
	m := map[string]int{}
	for _, v := range versions {
		m[v] = 1
	}
	return m
}

// TestMigrationsMakeTheSchema: Open applies each dialect's migration
// directory to an empty database once; and the directory, replayed on a
// real database of its dialect (Atlas's dev database, as a generator with
// a server would use), makes the schema ent/schema describes: ent finds
// nothing to add. A migration missing from the directory, or a PostgreSQL
// state file out of step with it, fails here.
func TestMigrationsMakeTheSchema(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dsn, db := k.fresh(t)
			c, err := store.Open(t.Context(), dsn)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			c.Close()
			if got, want := revisions(t, db), once(migrationFiles(t, k.name)); !cmp.Equal(got, want) {
				t.Errorf("revisions after Open: %v, want %v", got, want)
			}

			_, dev := k.fresh(t)
			dir := copyDir(t, filepath.Join("migrations", k.name))
			err = entmigrate.NewSchema(entsql.OpenDB(k.dialect(), dev)).Diff(t.Context(),
				entschema.WithDir(dir), entschema.WithMigrationMode(entschema.ModeReplay), entschema.WithErrNoPlan(true))
			if !errors.Is(err, atlasmigrate.ErrNoPlan) {
				files, _ := dir.Files()
				var plan []string
				for _, f := range files {
					plan = append(plan, f.Name()+":\n"+string(f.Bytes()))
				}
				t.Errorf("ent/schema against the %s directory replayed: %v; the directory would become:\n%s", k.name, err, strings.Join(plan, "\n"))
			}
		})
	}
}

// copyDir copies a migration directory into a temporary one.
func copyDir(t *testing.T, from string) *atlasmigrate.LocalDir {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := atlasmigrate.NewLocalDir(to)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestUpgradeKeepsRows: a store the release before versioned migrations
// made (the baseline's tables, no revisions table) with an agent, an
// approval, an audit entry, a rule and a person in it is opened by this
// board: the baseline is recorded as applied, every later migration is
// applied once, and every row reads back with every field it had.
func TestUpgradeKeepsRows(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dsn, db := k.fresh(t)
			schemaSQL, err := os.ReadFile(filepath.Join("testdata", "upgrade", k.name, "1-schema.sql"))
			if err != nil {
				t.Fatal(err)
			}
			rowsSQL, err := os.ReadFile(filepath.Join("testdata", "upgrade", k.name, "2-rows.sql"))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range [][]byte{schemaSQL, rowsSQL} {
				stmts, err := atlasmigrate.NewLocalFile("x.sql", b).Stmts()
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range stmts {
					if _, err := db.ExecContext(t.Context(), s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
			}
			c, err := store.Open(t.Context(), dsn)
			if err != nil {
				t.Fatalf("Open of the previous release's store: %v", err)
			}
			defer c.Close()
			versions := migrationFiles(t, k.name)
			if got, want := revisions(t, db), once(versions); !cmp.Equal(got, want) {
				t.Errorf("revisions after the upgrade: %v, want %v", got, want)
			}
			st, err := store.Migrations(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Pending) != 0 || len(st.Applied) != len(versions) || !st.Applied[0].Adopted {
				t.Errorf("Migrations after the upgrade = %d applied (baseline adopted: %v), %d pending; want %d, true, 0",
					len(st.Applied), len(st.Applied) > 0 && st.Applied[0].Adopted, len(st.Pending), len(versions))
			}
			checkRows(t, c)
			// The tables later migrations add are there to use.
			if n, err := c.EvalScore.Query().Count(t.Context()); err != nil || n != 0 {
				t.Errorf("eval scores after the upgrade: %d, %v; want an empty table", n, err)
			}
		})
	}
}

// checkRows reads back what testdata/upgrade/*/2-rows.sql inserted.
func checkRows(t *testing.T, c *ent.Client) {
	t.Helper()
	ctx := t.Context()
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t2 := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	same := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

	a, err := c.Agent.Query().Only(ctx)
	if err != nil {
		t.Fatalf("agent: %v", err)
	}
	type agentRow struct {
		Name, Description, PackageName string
		Online                         bool
		Capabilities                   []string
		RunsDropped                    int64
		FirstSeen, LastSeen            time.Time
	}
	gotA := agentRow{a.Name, a.Description, a.PackageName, a.Online, a.Capabilities, a.RunsDropped, a.FirstSeen, a.LastSeen}
	wantA := agentRow{"billing", "pays the bills", "billing-pkg", true, []string{"chat", "triggers"}, 3, t1, t2}
	if d := cmp.Diff(wantA, gotA, same); d != "" {
		t.Errorf("agent after the upgrade (-want +got):\n%s", d)
	}

	ap, err := c.Approval.Get(ctx, "ap-1")
	if err != nil {
		t.Fatalf("approval: %v", err)
	}
	type approvalRow struct {
		Agent, Run, Node, Show, Account, Digest, State, Reason string
		CreatedAt                                              time.Time
		DecidedAt                                              *time.Time
	}
	gotAp := approvalRow{ap.Agent, ap.Run, ap.Node, ap.Show, ap.Account, ap.Digest, ap.State, ap.Reason, ap.CreatedAt, ap.DecidedAt}
	wantAp := approvalRow{"billing", "run-1", "pay", "Pay 40 EUR to ACME", "acme", "sha256:abc", "approved", "invoice matches", t1, &t2}
	if d := cmp.Diff(wantAp, gotAp, same); d != "" {
		t.Errorf("approval after the upgrade (-want +got):\n%s", d)
	}

	e, err := c.AuditEntry.Query().Only(ctx)
	if err != nil {
		t.Fatalf("audit entry: %v", err)
	}
	type auditRow struct {
		Seq                                        int64
		At                                         time.Time
		Actor, Action, Subject, Detail, Prev, Hash string
	}
	if e.Seq == nil {
		t.Fatal("audit entry after the upgrade: its seq is gone")
	}
	gotE := auditRow{*e.Seq, e.At, e.Actor, e.Action, e.Subject, e.Detail, e.Prev, e.Hash}
	wantE := auditRow{1, t1, "user:ann", "approval.decide", "ap-1", `{"say":"approve"}`, "", "h1"}
	if d := cmp.Diff(wantE, gotE, same); d != "" {
		t.Errorf("audit entry after the upgrade (-want +got):\n%s", d)
	}

	r, err := c.Rule.Get(ctx, "r-1")
	if err != nil {
		t.Fatalf("rule: %v", err)
	}
	type ruleRow struct {
		Agent, Node, Role, Description, UpdatedBy string
		People                                    []string
		Quorum                                    int
		TimeLimit                                 int64
		RequireReason, AllowSelfApproval          bool
		CreatedAt, UpdatedAt                      time.Time
	}
	gotR := ruleRow{r.Agent, r.Node, r.Role, r.Description, r.UpdatedBy, r.People, r.Quorum, r.TimeLimit, r.RequireReason, r.AllowSelfApproval, r.CreatedAt, r.UpdatedAt}
	wantR := ruleRow{"billing", "pay", "finance", "two of finance", "user:ann", []string{"ann@example.com", "bob@example.com"}, 2, 3600, true, false, t1, t2}
	if d := cmp.Diff(wantR, gotR, same); d != "" {
		t.Errorf("rule after the upgrade (-want +got):\n%s", d)
	}

	u, err := c.User.Get(ctx, "u-1")
	if err != nil {
		t.Fatalf("user: %v", err)
	}
	type userRow struct {
		Email, Name, Role, PasswordHash string
		Disabled                        bool
		SetupExpiresAt                  *time.Time
		CreatedAt, UpdatedAt            time.Time
	}
	gotU := userRow{u.Email, u.Name, u.Role, u.PasswordHash, u.Disabled, u.SetupExpiresAt, u.CreatedAt, u.UpdatedAt}
	wantU := userRow{"ann@example.com", "Ann", "admin", "argon2id$x", false, nil, t1, t2}
	if d := cmp.Diff(wantU, gotU, same); d != "" {
		t.Errorf("user after the upgrade (-want +got):\n%s", d)
	}
}

// TestUpgradeSchemaIsTheBaseline: the schema the upgrade test starts from
// is the baseline migration, byte for byte: an applied migration is never
// edited.
func TestUpgradeSchemaIsTheBaseline(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"postgres", "sqlite"} {
		versions := migrationFiles(t, d)
		matches, err := filepath.Glob(filepath.Join("migrations", d, versions[0]+"_*.sql"))
		if err != nil || len(matches) != 1 {
			t.Fatalf("the %s baseline: %v, %v", d, matches, err)
		}
		base, err := os.ReadFile(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		kept, err := os.ReadFile(filepath.Join("testdata", "upgrade", d, "1-schema.sql"))
		if err != nil {
			t.Fatal(err)
		}
		if string(base) != string(kept) {
			t.Errorf("%s differs from testdata/upgrade/%s/1-schema.sql: the baseline was edited", matches[0], d)
		}
	}
}

// TestOpenTogether: boards starting at once on one new store both come
// up, and each migration is applied once.
func TestOpenTogether(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dsn, db := k.fresh(t)
			const boards = 2
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  [boards]error
			)
			for i := range boards {
				wg.Go(func() {
					<-start
					c, err := store.Open(t.Context(), dsn)
					errs[i] = err
					if err == nil {
						errs[i] = c.Close()
					}
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("board %d: Open: %v", i, err)
				}
			}
			if got, want := revisions(t, db), once(migrationFiles(t, k.name)); !cmp.Equal(got, want) {
				t.Errorf("revisions after %d boards opened together: %v, want each migration once: %v", boards, got, want)
			}
		})
	}
}

// TestSchemaNewerRefused: a store that has applied a migration this board
// does not know, as a newer board would have, is refused by Open, by
// Migrate and by Migrations, and left as it was.
func TestSchemaNewerRefused(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dsn, db := k.fresh(t)
			c, err := store.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			q := `INSERT INTO ` + store.RevisionsTable + ` (version, description, type, applied, total, executed_at, execution_time, hash, operator_version) VALUES ('29991231000000', 'add_the_future', 2, 1, 1, $1, 0, 'x', 'a newer board')`
			if _, err := db.ExecContext(t.Context(), q, time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
			before := revisions(t, db)
			_, err = store.Open(t.Context(), dsn)
			var newer *store.SchemaNewerError
			if !errors.As(err, &newer) || !errors.Is(err, store.ErrSchemaNewer) || newer.Version != "29991231000000" {
				t.Fatalf("Open of a store a newer board migrated = %v, want a *SchemaNewerError for 29991231000000", err)
			}
			if !strings.Contains(err.Error(), "the store's schema is newer than this board") {
				t.Errorf("Open: %v, want it to say the store's schema is newer than this board", err)
			}
			if _, err := store.Migrate(t.Context(), dsn); !errors.Is(err, store.ErrSchemaNewer) {
				t.Errorf("Migrate = %v, want ErrSchemaNewer", err)
			}
			if _, err := store.Migrations(t.Context(), dsn); !errors.Is(err, store.ErrSchemaNewer) {
				t.Errorf("Migrations = %v, want ErrSchemaNewer", err)
			}
			if got := revisions(t, db); !cmp.Equal(got, before) {
				t.Errorf("revisions after the refusals: %v, want them as they were: %v", got, before)
			}
		})
	}
}

// TestMigrationEditedRefused: a store whose recorded migration's hash is
// not the one this board has for it (the file was edited after it was
// applied) is refused.
func TestMigrationEditedRefused(t *testing.T) {
	k := kinds[0]
	dsn, db := k.fresh(t)
	c, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := db.ExecContext(t.Context(), `UPDATE `+store.RevisionsTable+` SET hash = 'edited'`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(t.Context(), dsn); !errors.Is(err, store.ErrMigrationChanged) {
		t.Errorf("Open with an edited migration = %v, want ErrMigrationChanged", err)
	}
}

// TestMigrateAndMigrations: on a new store of either dialect Migrations says
// everything is pending and changes nothing; Migrate applies it all, and
// a second Migrate has nothing to do.
func TestMigrateAndMigrations(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dsn, db := k.fresh(t)
			ctx := context.Background()
			versions := migrationFiles(t, k.name)
			st, err := store.Migrations(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Applied) != 0 || len(st.Pending) != len(versions) || st.Pending[0].SQL == "" {
				t.Errorf("Migrations of a new store = %d applied, %d pending; want 0, %d, with their SQL", len(st.Applied), len(st.Pending), len(versions))
			}
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+store.RevisionsTable).Scan(&n); err == nil {
				t.Errorf("Migrations made the revisions table")
			}
			done, err := store.Migrate(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range done {
				got = append(got, m.Version)
			}
			if !cmp.Equal(got, versions) {
				t.Errorf("Migrate applied %v, want %v", got, versions)
			}
			if done, err := store.Migrate(ctx, dsn); err != nil || len(done) != 0 {
				t.Errorf("second Migrate = %v, %v; want nothing applied", done, err)
			}
			st, err = store.Migrations(ctx, dsn)
			if err != nil || len(st.Pending) != 0 || len(st.Applied) != len(versions) || st.Applied[0].AppliedAt.IsZero() || st.Applied[0].Adopted {
				t.Errorf("Migrations after Migrate = %+v, %v; want all %d applied, with when", st, err, len(versions))
			}
		})
	}
}
