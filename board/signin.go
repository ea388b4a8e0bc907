package board

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/user"
	"github.com/symphonix/symphonix/identity"
)

// The sign-in endpoints are plain HTTP on the board's mux (docs/people.md):
//
//	POST /auth/signin  SignInRequest                → Session, with its CSRF token, and the cookies
//	POST /auth/signout (cookie and X-CSRF-Token)    → the session ended
//	POST /auth/setup   SetupRequest                 → User: a one-time setup link used
//	GET  /auth/session (cookie)                     → Session: who is signed in
//
// Bodies are the API's messages (user.proto) as protobuf JSON, the same
// field names, enums and times as every RPC's; any other answer is an
// AuthError. Requests must be JSON, so a cross-site HTML form cannot post
// them, and hold nothing the board does not know (docs/api-policy.md).

// maxAuthBody bounds what an /auth request may send.
const maxAuthBody = 8 << 10

func (b *Board) authRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /auth/signin", b.signIn)
	mux.HandleFunc("POST /auth/signout", b.signOut)
	mux.HandleFunc("POST /auth/setup", b.setup)
	mux.HandleFunc("GET /auth/session", b.sessionInfo)
}

// sessionProto is who is signed in as a Session: the CSRF token only right
// after sign-in.
func sessionProto(email, name, role, csrf string, expires time.Time) *boardv1.Session {
	return &boardv1.Session{Email: email, Name: name, Role: storedRoleProto(role), CsrfToken: csrf, ExpireTime: timestamppb.New(expires)}
}

// errWrongPassword is the one answer to an unknown email, a wrong
// password, a person without a password, and a disabled person.
const errWrongPassword = "wrong email or password"

func (b *Board) signIn(w http.ResponseWriter, r *http.Request) {
	var req boardv1.SignInRequest
	if !readAuthBody(w, r, &req) {
		return
	}
	ctx := r.Context()
	source := b.sourceOf(r)
	account, err := identity.CanonicalEmail(req.GetEmail())
	if err != nil {
		account = req.GetEmail() // counted all the same
	}
	wait, ok := b.signinTake(ctx, account, source)
	if !ok {
		b.log.LogAttrs(ctx, slog.LevelWarn, "sign-in limited", slog.String("email", account), slog.String("source", source))
		b.metrics.signinFailed("limited")
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		writeAuthError(w, http.StatusTooManyRequests, "too many failed sign-ins: try again later")
		return
	}
	failed := false
	defer func() { b.signinDone(ctx, account, source, failed) }()
	var row *ent.User
	why := ""
	if err == nil {
		row, err = b.db.User.Query().Where(user.Email(account)).Only(ctx)
	}
	switch {
	case ent.IsNotFound(err) || errors.Is(err, identity.ErrBadEmail):
		why = "no such user"
	case err != nil:
		b.log.ErrorContext(ctx, "sign in", "err", err)
		writeAuthError(w, http.StatusInternalServerError, "internal error")
		return
	}
	hash := ""
	if row != nil {
		hash = row.PasswordHash
	}
	if len(req.GetPassword()) > identity.MaxPasswordBytes {
		// Nobody's password: refused without the cost of a hash.
		ok = false
	} else {
		// Always one argon2id: against the dummy hash when there is
		// nothing to check, so an unknown email takes as long as a wrong
		// password.
		release, free := b.hashSlots.try()
		if !free {
			writeHashBusy(w) // not counted: nothing was checked
			return
		}
		ok = identity.PasswordMatches(hash, req.GetPassword())
		release()
	}
	switch {
	case why != "":
	case row.PasswordHash == "":
		why, ok = "no password set", false
	case len(req.GetPassword()) > identity.MaxPasswordBytes:
		why = "password too long"
	case !ok:
		why = "wrong password"
	case row.Disabled:
		why, ok = "disabled", false
	}
	if !ok {
		failed = true
		b.metrics.signinFailed("refused")
		if err := b.audit.AppendNow(ctx, audit.Record{
			Actor: "board", Action: "signin.fail", Subject: account,
			Detail: map[string]any{"email": account, "source": source, "why": why},
		}); err != nil {
			b.log.ErrorContext(ctx, "audit failed sign-in", "err", err)
		}
		writeAuthError(w, http.StatusUnauthorized, errWrongPassword)
		return
	}
	b.signinAccount.reset(ctx, account)
	s, err := b.sessions.Start(ctx, row.ID, row.Email, source)
	if err != nil {
		b.log.ErrorContext(ctx, "start session", "err", err)
		writeAuthError(w, http.StatusInternalServerError, "internal error")
		return
	}
	setSessionCookies(w, r, s.Token, s.CSRF, s.Expires.Sub(b.now()))
	writeAuthBody(w, http.StatusOK, sessionProto(row.Email, row.Name, row.Role, s.CSRF, s.Expires))
}

// signinTake starts a sign-in attempt for account from source, or says
// how long until one may be made. Attempts in flight count as failures
// until they end (limiter.take), so a burst of concurrent sign-ins checks
// no more passwords than the limits allow. Every signinTake that succeeds
// is followed by one signinDone.
func (b *Board) signinTake(ctx context.Context, account, source string) (time.Duration, bool) {
	wa, ok := b.signinAccount.take(ctx, account)
	if !ok {
		return wa, false
	}
	ws, ok := b.signinSource.take(ctx, source)
	if !ok {
		b.signinAccount.done(ctx, account, false)
		return ws, false
	}
	return 0, true
}

// signinDone ends an attempt signinTake started: counted against both
// limits when failed, and only when failed; a success has already cleared
// the account's count (not the source's).
func (b *Board) signinDone(ctx context.Context, account, source string, failed bool) {
	b.signinAccount.done(ctx, account, failed)
	b.signinSource.done(ctx, source, failed)
}

// signOut ends the session of the cookie. Like every request the cookie
// authenticates, it needs the CSRF header.
func (b *Board) signOut(w http.ResponseWriter, r *http.Request) {
	c, ok := b.cookieCaller(w, r)
	if !ok {
		return
	}
	if err := b.sessions.End(r.Context(), c); err != nil {
		b.log.ErrorContext(r.Context(), "sign out", "err", err)
		writeAuthError(w, http.StatusInternalServerError, "internal error")
		return
	}
	setSessionCookies(w, r, "", "", -1)
	w.WriteHeader(http.StatusNoContent)
}

// sessionInfo says who the cookie is, without a CSRF check: it changes
// nothing and says nothing secret.
func (b *Board) sessionInfo(w http.ResponseWriter, r *http.Request) {
	c, _, err := b.sessions.Verify(r.Context(), sessionCookie(r.Header))
	if err != nil {
		writeAuthError(w, http.StatusUnauthorized, "not signed in")
		return
	}
	u, err := b.db.User.Get(r.Context(), c.UserID)
	if err != nil {
		writeAuthError(w, http.StatusUnauthorized, "not signed in")
		return
	}
	writeAuthBody(w, http.StatusOK, sessionProto(u.Email, u.Name, u.Role, "", c.ExpiresAt))
}

// cookieCaller authenticates a plain HTTP request by its session cookie
// and CSRF header, or answers it 401 or 403 and returns false.
func (b *Board) cookieCaller(w http.ResponseWriter, r *http.Request) (identity.Caller, bool) {
	c, csrf, err := b.sessions.Verify(r.Context(), sessionCookie(r.Header))
	if err != nil {
		writeAuthError(w, http.StatusUnauthorized, "not signed in")
		return identity.Caller{}, false
	}
	if !identity.CSRFMatches(r.Header.Get(CSRFHeader), csrf) {
		writeAuthError(w, http.StatusForbidden, errCSRF)
		return identity.Caller{}, false
	}
	return c, true
}

// setup redeems a one-time setup link. It does not sign in: the person
// signs in with the password they just set.
func (b *Board) setup(w http.ResponseWriter, r *http.Request) {
	var req boardv1.SetupRequest
	if !readAuthBody(w, r, &req) {
		return
	}
	s := identity.Setup{Token: req.GetToken(), Email: req.GetEmail(), Name: req.GetName(), Password: req.GetPassword()}
	// The cheap checks (the link above all) first, so that a request that
	// would be refused never waits for, or takes, a hashing slot.
	err := b.users.CheckSetup(r.Context(), s)
	var u identity.User
	if err == nil {
		release, free := b.hashSlots.try()
		if !free {
			writeHashBusy(w)
			return
		}
		u, err = b.users.Setup(r.Context(), s)
		release()
	}
	switch {
	case errors.Is(err, identity.ErrWeakPassword), errors.Is(err, identity.ErrBadEmail), errors.Is(err, identity.ErrSetupLink), errors.Is(err, identity.ErrBadName):
		writeAuthError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		b.log.ErrorContext(r.Context(), "setup", "err", err)
		writeAuthError(w, http.StatusInternalServerError, "internal error")
		return
	}
	writeAuthBody(w, http.StatusOK, userProto(u))
}

// setSessionCookies sets (or, with maxAge < 0, clears) the session and
// CSRF cookies.
func setSessionCookies(w http.ResponseWriter, r *http.Request, token, csrf string, maxAge time.Duration) {
	age := int(maxAge / time.Second)
	if maxAge < 0 {
		age = -1
	}
	for _, c := range []*http.Cookie{
		{Name: SessionCookie, Value: token, HttpOnly: true},
		{Name: CSRFCookie, Value: csrf},
	} {
		c.Path = "/"
		c.MaxAge = age
		c.Secure = r.TLS != nil
		c.SameSite = http.SameSiteStrictMode
		http.SetCookie(w, c)
	}
}

// readAuthBody reads the request's body into m, or answers the request
// and returns false: 415 unless it is JSON, 413 past maxAuthBody, 408 when
// it comes too slowly, and 400, naming the field when it can, for a body
// that is not m as protobuf JSON or holds a field m does not have.
func readAuthBody(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeAuthError(w, http.StatusUnsupportedMediaType, "send application/json")
		return false
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAuthBody))
	var (
		tooLarge *http.MaxBytesError
		slow     *slowBodyError
	)
	switch {
	case errors.As(err, &tooLarge):
		writeAuthError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body: more than %d bytes", maxAuthBody))
		return false
	case errors.As(err, &slow):
		writeAuthError(w, http.StatusRequestTimeout, "body: "+slow.Error())
		return false
	case err != nil:
		writeAuthError(w, http.StatusBadRequest, "body: not read whole")
		return false
	}
	if err := protojson.Unmarshal(data, m); err != nil {
		md := m.ProtoReflect().Descriptor()
		why := jsonRefusal(md, data, "")
		if why == "" {
			why = fmt.Sprintf("body: not a JSON %s", md.Name())
		}
		writeAuthError(w, http.StatusBadRequest, why)
		return false
	}
	return true
}

// writeAuthBody answers an /auth request with m as protobuf JSON.
func writeAuthBody(w http.ResponseWriter, status int, m proto.Message) {
	data, err := protojson.Marshal(m)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// writeAuthError answers an /auth request with an AuthError.
func writeAuthError(w http.ResponseWriter, status int, msg string) {
	writeAuthBody(w, status, &boardv1.AuthError{Error: msg})
}
