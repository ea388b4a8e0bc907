package identity_test

import (
	"errors"
	"testing"

	"github.com/symphonix/symphonix/identity"
)

func TestCanonicalEmail(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"alice@example.com":       "alice@example.com",
		"  Alice@Example.COM\t":   "alice@example.com",
		"a.b+tag@sub.example.org": "a.b+tag@sub.example.org",
		"root@localhost":          "root@localhost",
	}
	for in, want := range good {
		if got, err := identity.CanonicalEmail(in); err != nil || got != want {
			t.Errorf("CanonicalEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "alice", "@example.com", "alice@", "a@b@c", "Alice <alice@example.com>", "al ice@example.com", "alice@.example.com", "alice@example..com", "alice@example.com.", "a\n@example.com"} {
		if got, err := identity.CanonicalEmail(in); !errors.Is(err, identity.ErrBadEmail) {
			t.Errorf("CanonicalEmail(%q) = %q, %v; want ErrBadEmail", in, got, err)
		}
	}
}

// TestUserService: an admin adds, lists, re-roles and disables people; a
// setup link comes back and no password is set; bad requests name their
// field; the last enabled admin cannot be taken away.
