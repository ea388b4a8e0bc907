package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"
)

// VisitorCookie is the cookie a served agent with a board knows a browser
// by: 32 random bytes, base64url. The index keeps only its SHA-256.
const VisitorCookie = "symphonix_visitor"

// visitorCookieLife is how long a browser keeps its visitor cookie after
// its last request: as long as the index keeps a thread nobody touched.
const visitorCookieLife = conversationsKeep

// caller is who a request comes from, as the door sees it.
type caller struct {
	// operator: the door is off (no board), or the request came from the
	// agent's operator: every thread is theirs, and nothing is claimed.
	operator bool
	// visitor: the SHA-256 (hex) of the browser's visitor cookie, or
	// boardVisitor(who) for a person asking through the board.
	visitor string
}

type callerKey struct{}

func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerFrom is the caller the API put on the request's context; false
// for a context without one, which may reach nothing.
func callerFrom(ctx context.Context) (caller, bool) {
	c, ok := ctx.Value(callerKey{}).(caller)
	return c, ok
}

// identify says who r comes from. Without a board there is no door: the
// caller is the operator: everyone at the machine is. With one, a browser is known
// by its visitor cookie, given one on its first request and kept alive on
// each; a request that carries none and is not from a browser (no
// Sec-Fetch-Site, no Origin: curl, a script) to an agent served on
// loopback only is the operator. Served --public, there is no operator
// over HTTP.
func (s *Server) identify(w http.ResponseWriter, r *http.Request) caller {
	if !s.monitored {
		return caller{operator: true}
	}
	if ck, err := r.Cookie(VisitorCookie); err == nil && validVisitorCookie(ck.Value) {
		s.setVisitorCookie(w, r, ck.Value)
		return caller{visitor: visitorID(ck.Value)}
	}
	if !s.public && r.Header.Get("Sec-Fetch-Site") == "" && r.Header.Get("Origin") == "" {
		return caller{operator: true}
	}
	v := newVisitorCookie()
	s.setVisitorCookie(w, r, v)
	return caller{visitor: visitorID(v)}
}

func (s *Server) setVisitorCookie(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{
		Name:     VisitorCookie,
		Value:    value,
		Path:     "/",
		MaxAge:   int(visitorCookieLife / time.Second),
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}

func newVisitorCookie() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// validVisitorCookie: 32 bytes, base64url without padding. Anything else
// is no cookie, and the browser is given a new one.
func validVisitorCookie(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil && len(b) == 32
}

// visitorID is what the index keeps of a visitor cookie: its SHA-256, so
// the file does not hold anything a browser could be made to send.
func visitorID(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}

// errNoConversation is a thread the caller may not see: another's, one
// from before the door, or none at all. The three answer alike, so a
// visitor learns nothing of threads that are not theirs.
var errNoConversation = &requestError{status: http.StatusNotFound, field: "thread", msg: "no such conversation"}

// mayUse checks that the caller on ctx may see thread; errNoConversation
// when not.
func (s *Server) mayUse(ctx context.Context, thread string) error {
	c, ok := callerFrom(ctx)
	if !ok {
		return errNoConversation
	}
	if c.operator || s.convs.may(thread, c.visitor) {
		return nil
	}
	return errNoConversation
}

// claim checks that the caller on ctx may post to thread, and claims a
// thread nobody has for the visitor: the first visitor to post to a new
// name has it. A thread that exists without a visitor (from before the
// door, or the operator's) is nobody's to claim. An operator known as a
// visitor (an admin through the board) claims a new thread too, and may
// post to any.
func (s *Server) claim(ctx context.Context, thread string) error {
	c, ok := callerFrom(ctx)
	switch {
	case !ok:
		return errNoConversation
	case c.operator && c.visitor == "":
		return nil
	}
	p, err := s.agent.Graph.Pending(ctx, thread)
	if err != nil {
		return err
	}
	if s.convs.claim(ctx, thread, c.visitor, p != nil, s.now()) || c.operator {
		return nil
	}
	return errNoConversation
}

// visible is the part of list the caller may see.
func (s *Server) visible(ctx context.Context, list []Conversation) []Conversation {
	c, ok := callerFrom(ctx)
	if ok && c.operator {
		return list
	}
	out := []Conversation{}
	if !ok {
		return out
	}
	for _, conv := range list {
		if s.convs.may(conv.Thread, c.visitor) {
			out = append(out, conv)
		}
	}
	return out
}
