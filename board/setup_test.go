package board_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestFirstRun: an empty board has a first-run link; it creates the first
// admin once, over HTTP, and the board then has none to give.
func TestFirstRun(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	users := bt.Board.Users()
	old, ok, err := users.FirstRun(t.Context())
	if err != nil || !ok {
		t.Fatalf("FirstRun on an empty board = %v, %v; want a link", ok, err)
	}
	link, _, _ := users.FirstRun(t.Context()) // a restart: a new link
	if len(link.Token) != 43 || link.Path() != "/setup#token="+link.Token {
		t.Errorf("link %q: want 32 bytes of base64url in the fragment of /setup", link.Path())
	}
	body := map[string]string{"token": old.Token, "email": " Root@Example.com", "name": "Root", "password": password}
	if resp, b := bt.PostJSON("/auth/setup", body, "", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("setup with the link a restart replaced: %s %s, want 400", resp.Status, b)
	}
	body["token"] = link.Token
	body["password"] = "short"
	if resp, b := bt.PostJSON("/auth/setup", body, "", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("setup with a short password: %s %s, want 400", resp.Status, b)
	}
	body["password"] = password
	if resp, b := bt.PostJSON("/auth/setup", body, "", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("setup: %s %s", resp.Status, b)
	}
	if resp, b := bt.PostJSON("/auth/setup", body, "", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("setup a second time: %s %s, want 400", resp.Status, b)
	}
	u, err := users.ByEmail(t.Context(), "root@example.com")
	if err != nil || u.Role != identity.RoleAdmin || !u.HasPassword || u.Name != "Root" {
		t.Fatalf("first admin = %+v, %v", u, err)
	}
	bt.SignIn("root@example.com", password)
	if _, ok, err := users.FirstRun(t.Context()); ok || err != nil {
		t.Errorf("FirstRun with an admin = %v, %v; want no link", ok, err)
	}
}

// TestSetupLinks: a link from AddUser sets the person's password once,
// until it expires (time driven by synctest).
func TestSetupLinks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t, 0)
		users := b.Users()
		first, ok, err := users.FirstRun(t.Context()) // then people are added by other means
		if err != nil || !ok {
			t.Fatalf("FirstRun = %v, %v", ok, err)
		}
		_, link, err := users.Add(t.Context(), identity.AddUser{Email: "alice@example.com", Role: identity.RoleViewer, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if !link.ExpiresAt.Equal(time.Now().Add(identity.SetupTTL)) {
			t.Errorf("link expires %s, want in %s", link.ExpiresAt, identity.SetupTTL)
		}
		_, late, err := users.Add(t.Context(), identity.AddUser{Email: "bob@example.com", Role: identity.RoleViewer, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(identity.SetupTTL - time.Second)
		if _, err := users.Setup(t.Context(), identity.Setup{Token: link.Token, Name: "Alice", Password: password}); err != nil {
			t.Fatalf("setup a second before expiry: %v", err)
		}
		if _, err := users.Setup(t.Context(), identity.Setup{Token: link.Token, Password: password + "2"}); !errors.Is(err, identity.ErrSetupLink) {
			t.Errorf("setup again: %v, want ErrSetupLink", err)
		}
		time.Sleep(time.Second)
		if _, err := users.Setup(t.Context(), identity.Setup{Token: late.Token, Password: password}); !errors.Is(err, identity.ErrSetupLink) {
			t.Errorf("setup at expiry: %v, want ErrSetupLink", err)
		}
		if _, err := users.Setup(t.Context(), identity.Setup{Token: first.Token, Email: "root@example.com", Password: password}); !errors.Is(err, identity.ErrSetupLink) {
			t.Errorf("a first-run link on a board with people: %v, want ErrSetupLink", err)
		}
		u, err := users.ByEmail(t.Context(), "bob@example.com")
		if err != nil || u.HasPassword {
			t.Errorf("bob = %+v, %v; want no password", u, err)
		}
	})
}

// TestFirstRunExpires: the first-run link stops working after SetupTTL.
func TestFirstRunExpires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t, 0)
		link, ok, err := b.Users().FirstRun(t.Context())
		if err != nil || !ok {
			t.Fatalf("FirstRun = %v, %v", ok, err)
		}
		time.Sleep(identity.SetupTTL)
		if _, err := b.Users().Setup(t.Context(), identity.Setup{Token: link.Token, Email: "root@example.com", Password: password}); !errors.Is(err, identity.ErrSetupLink) {
			t.Fatalf("first-run link at expiry: %v, want ErrSetupLink", err)
		}
	})
}
