package board

import "net/http"

// Web sign-ins (docs/people.md). The session itself — its JWT, its row and
// its CSRF token — is identity.Sessions; the board carries it in cookies
// and checks the CSRF header on every request a cookie authenticates.
const (
	// SessionCookie holds the session JWT: HttpOnly, SameSite=Strict,
	// Path=/, Secure when the board serves TLS.
	SessionCookie = "symphonix_session"
	// CSRFCookie holds the session's CSRF token where the page's script
	// can read it after a reload. The board never reads this cookie: it
	// checks the header against the session's row.
	CSRFCookie = "symphonix_csrf"
	// CSRFHeader carries the CSRF token on every request a session cookie
	// authenticates.
	CSRFHeader = "X-CSRF-Token"
)

// sessionCookie returns the session cookie's value in h, or "".
func sessionCookie(h http.Header) string {
	r := http.Request{Header: h}
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}
