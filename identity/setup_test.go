package identity_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// TestSetupChecksBeforeHashing: a setup that is refused is refused before
// its password is hashed. argon2id allocates 19 MiB a hash, so a refusal
// that allocates less than a few MiB hashed nothing. Not parallel: the
// allocations measured are the whole program's.
func TestSetupChecksBeforeHashing(t *testing.T) {
	db, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	users := identity.NewUsers(db, func() time.Time { return now })
	const pw = "correct horse battery"
	ctx := t.Context()

	first, ok, err := users.FirstRun(ctx)
	if err != nil || !ok {
		t.Fatalf("FirstRun = %v, %v", ok, err)
	}
	badEmail := identity.Setup{Token: first.Token, Email: "not an email", Password: pw}
	if err := users.CheckSetup(ctx, badEmail); !errors.Is(err, identity.ErrBadEmail) {
		t.Fatalf("first-run link with a bad email: %v, want ErrBadEmail", err)
	}
	if _, err := users.Setup(ctx, identity.Setup{Token: first.Token, Email: "root@example.com", Password: pw}); err != nil {
		t.Fatal(err)
	}
	_, used, err := users.Add(ctx, identity.AddUser{Email: "used@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.Setup(ctx, identity.Setup{Token: used.Token, Password: pw}); err != nil {
		t.Fatal(err)
	}
	_, gone, err := users.Add(ctx, identity.AddUser{Email: "gone@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.SetDisabled(ctx, "gone@example.com", true, "test"); err != nil {
		t.Fatal(err)
	}
	_, late, err := users.Add(ctx, identity.AddUser{Email: "late@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_, good, err := users.Add(ctx, identity.AddUser{Email: "good@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(identity.SetupTTL - time.Minute)
	_, fresh, err := users.Add(ctx, identity.AddUser{Email: "fresh@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute) // late's and good's links have expired; fresh's has not

	unknown := strings.Repeat("A", len(fresh.Token))
	cases := map[string]struct {
		s    identity.Setup
		want error
	}{
		"no token":                      {identity.Setup{Password: pw}, identity.ErrSetupLink},
		"unknown token":                 {identity.Setup{Token: unknown, Password: pw}, identity.ErrSetupLink},
		"token of the wrong size":       {identity.Setup{Token: strings.Repeat("A", 4000), Password: pw}, identity.ErrSetupLink},
		"used link":                     {identity.Setup{Token: used.Token, Password: pw}, identity.ErrSetupLink},
		"a disabled person's link":      {identity.Setup{Token: gone.Token, Password: pw}, identity.ErrSetupLink},
		"expired link":                  {identity.Setup{Token: late.Token, Password: pw}, identity.ErrSetupLink},
		"first-run link, board in use":  {identity.Setup{Token: first.Token, Email: "x@example.com", Password: pw}, identity.ErrSetupLink},
		"short password":                {identity.Setup{Token: fresh.Token, Password: "short"}, identity.ErrWeakPassword},
		"password too long":             {identity.Setup{Token: fresh.Token, Password: strings.Repeat("p", identity.MaxPasswordBytes+1)}, identity.ErrWeakPassword},
		"name with a control character": {identity.Setup{Token: fresh.Token, Name: "a\x00b", Password: pw}, identity.ErrBadName},
	}
	for name, tc := range cases {
		allocated := allocatedBy(func() {
			if _, err := users.Setup(ctx, tc.s); !errors.Is(err, tc.want) {
				t.Errorf("Setup with %s: %v, want %v", name, err, tc.want)
			}
		})
		if allocated > 4<<20 {
			t.Errorf("Setup with %s allocated %d MiB: it hashed the password before refusing", name, allocated>>20)
		}
	}
	// The control: a setup that goes through hashes, and allocates for it.
	if allocated := allocatedBy(func() {
		if _, err := users.Setup(ctx, identity.Setup{Token: fresh.Token, Password: pw}); err != nil {
			t.Errorf("Setup with a fresh link: %v", err)
		}
	}); allocated < 16<<20 {
		t.Errorf("a setup that hashed allocated %d bytes, want 19 MiB or more: the measure does not see hashing", allocated)
	}
	if err := users.CheckSetup(ctx, identity.Setup{Token: good.Token, Password: pw}); !errors.Is(err, identity.ErrSetupLink) {
		t.Errorf("CheckSetup with an expired link: %v, want ErrSetupLink", err)
	}
}

// allocatedBy is how many bytes the program allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
