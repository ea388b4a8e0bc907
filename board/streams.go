package board

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
)

// streamProcedures are the procedures whose calls stream: the link, the
// watches, the library's Publish and Download, gRPC reflection and
// health's Watch. All but the link are held to their credential while
// they are open (below); the link is, by presence. All but Publish and
// Download may stay open as long as they like, so their bodies are not
// held to a rate (bodyrate.go): a link sends when it has something to
// say.
var streamProcedures = map[string]bool{
	boardv1connect.AgentLinkServiceLinkProcedure:                     true,
	boardv1connect.AgentServiceWatchAgentsProcedure:                  true,
	boardv1connect.ApprovalServiceWatchApprovalsProcedure:            true,
	boardv1connect.RunServiceWatchRunsProcedure:                      true,
	boardv1connect.PackageServicePublishProcedure:                    true,
	boardv1connect.PackageServiceDownloadProcedure:                   true,
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      true,
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": true,
	"/grpc.health.v1.Health/Watch":                                   true,
}

// ratedStreams are the streams whose bodies are held to the rate of every
// request body all the same: they end when their upload does. A publish
// that stops sending loses its slot (library_publish.go); a download's
// body is its one request.
var ratedStreams = map[string]bool{
	boardv1connect.PackageServicePublishProcedure:  true,
	boardv1connect.PackageServiceDownloadProcedure: true,
}

// streamProcedure says whether calls to procedure stream.
func streamProcedure(procedure string) bool { return streamProcedures[procedure] }

// openEnded says whether calls to procedure may stay open as long as they
// like, their bodies held to no rate.
func openEnded(procedure string) bool { return streamProcedures[procedure] && !ratedStreams[procedure] }

// A stream lives no longer than the credential that opened it. Every
// stream but the link is registered here while it is open, with its
// caller and what its procedure needs; the board's loop checks them all
// again every RevocationPoll (identity.Sessions.Recheck) and ends those
// whose token was revoked or expired, whose session ended or expired,
// whose person was disabled, or whose person's role fell below the
// procedure's. The stream ends with unauthenticated or permission_denied,
// saying which.
//
// Ending a stream cancels its context, which ends a handler waiting to
// send (a watch), and closes its request body, which ends one waiting to
// receive (reflection).

// openStream is one stream held open.
type openStream struct {
	procedure string
	caller    identity.Caller
	need      access
	end       func(cause error)
}

// openStreams are the streams open on this board.
type openStreams struct {
	mu sync.Mutex
	m  map[*openStream]struct{}
}

func (o *openStreams) add(s *openStream) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[*openStream]struct{})
	}
	o.m[s] = struct{}{}
}

func (o *openStreams) remove(s *openStream) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, s)
}

func (o *openStreams) list() []*openStream {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]*openStream, 0, len(o.m))
	for s := range o.m {
		out = append(out, s)
	}
	return out
}

// lapsedError is why the board ended a stream: the credential that opened
// it no longer holds. It is the stream context's cause; end (auth.go)
// returns it to the client.
type lapsedError struct{ err *connect.Error }

func (l *lapsedError) Error() string { return l.err.Error() }

// lapsedCause is the lapsedError that ended ctx's stream, or nil.
func lapsedCause(ctx context.Context) *lapsedError {
	var l *lapsedError
	if errors.As(context.Cause(ctx), &l) {
		return l
	}
	return nil
}

// holdToCredentials registers every stream but the link while it is open
// (see above). It authenticates the stream itself, and refuses it as the
// interceptor would, so that no stream runs unregistered; the caller it
// found goes on in the request's context (withAuthenticated), so that the
// interceptor does not verify the credential again.
func (b *Board) holdToCredentials(next http.Handler) http.Handler {
	ew := connecthttp.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		procedure := r.URL.Path
		need, ok := policy[procedure]
		if !ok || !streamProcedure(procedure) || procedure == boardv1connect.AgentLinkServiceLinkProcedure {
			next.ServeHTTP(w, r)
			return
		}
		c, err := b.authenticate(r.Context(), procedure, r.Header)
		if err != nil {
			b.metrics.rpcDone(procedure, err, 0, false) // never reaches rpcMetrics
			_ = ew.Write(w, r, err)
			return
		}
		ctx, cancel := context.WithCancelCause(withAuthenticated(r.Context(), procedure, c))
		defer cancel(nil)
		body := r.Body
		s := &openStream{procedure: procedure, caller: c, need: need, end: func(cause error) {
			cancel(cause)
			if r.ProtoMajor >= 2 && body != nil {
				// Ends a Receive waiting for the client. (HTTP/1 serves no
				// stream the client sends on.)
				_ = body.Close()
			}
		}}
		b.openStreams.add(s)
		defer b.openStreams.remove(s)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authenticatedKey is the context key of a request's authenticated.
type authenticatedKey struct{}

// authenticated is the caller holdToCredentials found for a request to
// procedure.
type authenticated struct {
	procedure string
	caller    identity.Caller
}

// withAuthenticated is ctx carrying c as the caller authenticated for a
// request to procedure.
func withAuthenticated(ctx context.Context, procedure string, c identity.Caller) context.Context {
	return context.WithValue(ctx, authenticatedKey{}, authenticated{procedure: procedure, caller: c})
}

// authenticatedFor is the caller holdToCredentials authenticated for the
// request in ctx, if it did and the request is to procedure.
func authenticatedFor(ctx context.Context, procedure string) (identity.Caller, bool) {
	a, ok := ctx.Value(authenticatedKey{}).(authenticated)
	if !ok || a.procedure != procedure {
		return identity.Caller{}, false
	}
	return a.caller, true
}

// endLapsedStreams ends every open stream whose credential no longer
// holds. The board's loop calls it every RevocationPoll.
func (b *Board) endLapsedStreams(ctx context.Context) {
	open := b.openStreams.list()
	if len(open) == 0 {
		return
	}
	callers := make([]identity.Caller, len(open))
	for i, s := range open {
		callers[i] = s.caller
	}
	standing, err := b.sessions.Recheck(ctx, callers)
	if err != nil {
		b.log.ErrorContext(ctx, "recheck the credentials of open streams", "err", err)
		return
	}
	for i, s := range open {
		cause := lapse(s, standing[i])
		if cause == nil {
			continue
		}
		b.log.LogAttrs(ctx, slog.LevelInfo, "stream ended", slog.String("procedure", s.procedure),
			slog.String("caller", s.caller.Name), slog.String("why", cause.err.Message()))
		s.end(cause)
	}
}

// lapse is why s must end, given how its credential stands; nil when it
// may go on.
func lapse(s *openStream, st identity.Standing) *lapsedError {
	session := s.caller.Kind == identity.KindSession
	var msg string
	switch {
	case st.Err == nil && s.caller.Operates() && st.Role < s.need.role:
		return &lapsedError{connect.Errorf(connect.CodePermissionDenied, "permission denied: needs role %s", s.need.role)}
	case st.Err == nil:
		return nil
	case errors.Is(st.Err, identity.ErrExpired) && session:
		msg = "session expired"
	case errors.Is(st.Err, identity.ErrExpired):
		msg = "token expired"
	case session:
		msg = "session ended"
	default:
		msg = "token revoked"
	}
	return &lapsedError{connect.NewError(connect.CodeUnauthenticated, msg)}
}
