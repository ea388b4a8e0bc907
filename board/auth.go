package board

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// access is what a procedure needs of its caller.
type access struct {
	kind identity.Kind
	role identity.Role // for operators: the lowest role allowed
	// anyKind lets either kind call (the health service).
	anyKind bool
	// session: only a signed-in person (a session cookie), never a token.
	session bool
	// public: anyone, with no credential at all (health's Check, which
	// says no more than the probes do, docs/probes.md).
	public bool
}

// policy maps every procedure the board serves to what it needs. A procedure
// missing here is refused to everybody: nothing is open by accident.
var policy = map[string]access{
	boardv1connect.AgentLinkServiceLinkProcedure:                     {kind: identity.KindAgent},
	boardv1connect.AgentServiceListAgentsProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AgentServiceGetAgentProcedure:                     {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AuditServiceListAuditProcedure:                    {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.AuditServiceVerifyAuditProcedure:                  {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.AgentServiceWatchAgentsProcedure:                  {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AgentServiceGetHealthHistoryProcedure:             {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AgentServiceGetFleetHistoryProcedure:              {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AgentServiceListAgentBuildsProcedure:              {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AgentServicePauseAgentProcedure:                   {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.AgentServiceForgetAgentProcedure:                  {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.AgentServiceResumeAgentProcedure:                  {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.ApprovalServicePutRuleProcedure:                   {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.ApprovalServiceListRulesProcedure:                 {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ApprovalServicePreviewRuleProcedure:               {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.ApprovalServiceDeleteRuleProcedure:                {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.ApprovalServiceListApprovalsProcedure:             {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ApprovalServiceGetApprovalProcedure:               {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ApprovalServiceDecideProcedure:                    {kind: identity.KindOperator, role: identity.RoleApprover},
	boardv1connect.ApprovalServiceCancelProcedure:                    {kind: identity.KindOperator, role: identity.RoleApprover},
	boardv1connect.ApprovalServiceOpenActionLinkProcedure:            {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ApprovalServiceListConsentsProcedure:              {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ApprovalServiceRevokeConsentProcedure:             {kind: identity.KindOperator, role: identity.RoleApprover},
	boardv1connect.ApprovalServiceWatchApprovalsProcedure:            {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ChatServiceTalkProcedure:                          {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ChatServiceGetChatPageProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ChatServiceDescribeAgentProcedure:                 {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ChatServiceListThreadsProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ChatServiceGetThreadProcedure:                     {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ConversationServiceListConversationsProcedure:     {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.EvalServiceListEvalScoresProcedure:                {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.EvalServicePublishEvalScoresProcedure:             {kind: identity.KindAgent},
	boardv1connect.PackageServicePublishProcedure:                    {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.PackageServiceListPackagesProcedure:               {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.PackageServiceGetPackageProcedure:                 {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.PackageServiceDownloadProcedure:                   {anyKind: true},
	boardv1connect.PackageServiceYankProcedure:                       {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.PackageServiceAddKeyProcedure:                     {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.PackageServiceListKeysProcedure:                   {anyKind: true},
	boardv1connect.PackageServiceRevokeKeyProcedure:                  {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.PackageServicePutScopeProcedure:                   {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.PackageServiceListScopesProcedure:                 {anyKind: true},
	boardv1connect.RunServiceListRunsProcedure:                       {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.RunServiceGetRunProcedure:                         {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.RunServiceWatchRunsProcedure:                      {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.RunServiceStartRunProcedure:                       {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.RunServiceStopRunProcedure:                        {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.RunServiceGetRunTreeProcedure:                     {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.RunServiceListDelegationFailuresProcedure:         {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AlertServicePutAlertRuleProcedure:                 {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.AlertServiceListAlertRulesProcedure:               {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.AlertServiceDeleteAlertRuleProcedure:              {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.AlertServiceListAlertsProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ToolServiceListServersProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ToolServiceGetSwitchesProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.ToolServiceReplaceSwitchesProcedure:               {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.ToolServiceSetToolSwitchProcedure:                 {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.ToolServiceListSwitchesProcedure:                  {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.TriggerServiceListTriggersProcedure:               {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.TriggerServicePauseTriggerProcedure:               {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.TriggerServiceResumeTriggerProcedure:              {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.UserServiceMeProcedure:                            {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.UserServiceListUsersProcedure:                     {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.UserServiceAddUserProcedure:                       {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.UserServiceSetUserRoleProcedure:                   {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.UserServiceDisableUserProcedure:                   {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.UserServiceEnableUserProcedure:                    {kind: identity.KindOperator, role: identity.RoleAdmin},
	boardv1connect.UserServiceSetVerifySecretProcedure:               {kind: identity.KindOperator, role: identity.RoleViewer, session: true},
	boardv1connect.UserServiceEnterPairingCodeProcedure:              {kind: identity.KindOperator, role: identity.RoleViewer, session: true},
	boardv1connect.UserServiceGetIdentifyProcedure:                   {kind: identity.KindOperator, role: identity.RoleViewer},
	boardv1connect.UserServiceSetIdentifyProcedure:                   {kind: identity.KindOperator, role: identity.RoleAdmin},
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      {kind: identity.KindOperator, role: identity.RoleViewer},
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": {kind: identity.KindOperator, role: identity.RoleViewer},
	"/grpc.health.v1.Health/Check":                                   {public: true},
	MetricsPath:                                                      {kind: identity.KindOperator, role: identity.RoleViewer},
	"/grpc.health.v1.Health/Watch":                                   {anyKind: true},
}

// errCSRF is what a request authenticated by a session cookie is told
// when it lacks the CSRF header or carries the wrong one.
const errCSRF = "missing or wrong " + CSRFHeader + " header: a request signed in by cookie must carry the CSRF token its sign-in returned"

// authenticate checks the credentials in a request's header h against what
// procedure needs and returns the caller, or a connect error that says no
// more than unauthenticated or permission_denied.
//
// A credential that could not be checked because the store failed is
// answered unavailable, never unauthenticated.
//
// A request with a bearer token is judged by the token alone: an operator
// or agent JWT, never a session JWT (its typ differs). A request without one
// may be a signed-in person: the session cookie, checked against its row
// and its person on every request, and the CSRF header, checked against the
// session's. The cookie stands in for an operator only, never for an agent,
// and an operator token never for a signed-in person.
func (b *Board) authenticate(ctx context.Context, procedure string, h http.Header) (identity.Caller, error) {
	need, ok := policy[procedure]
	if !ok {
		return identity.Caller{}, connect.NewError(connect.CodePermissionDenied, "permission denied")
	}
	if need.public {
		return identity.Caller{}, nil
	}
	raw := bearer(h.Get("Authorization"))
	cookie := ""
	if raw == "" {
		cookie = sessionCookie(h)
	}
	var (
		c    identity.Caller
		csrf string
		err  error
	)
	switch {
	case cookie != "" && (need.anyKind || need.kind != identity.KindOperator):
		err = identity.ErrWrongKind
	case cookie != "":
		c, csrf, err = b.sessions.Verify(ctx, cookie)
	case need.anyKind:
		now := b.now()
		claim, cerr := b.tokens.Claim(raw, identity.KindOperator, now)
		if cerr != nil {
			claim, cerr = b.tokens.Claim(raw, identity.KindAgent, now)
		}
		c, err = b.checkToken(claim, cerr)
	default:
		c, err = b.checkToken(b.tokens.Claim(raw, need.kind, b.now()))
	}
	if errors.Is(err, identity.ErrStore) {
		// Nothing is known against the credential: the caller is told to
		// come back, never that it was refused (an agent waits long after
		// a refusal).
		b.log.LogAttrs(ctx, slog.LevelError, "check credentials", slog.String("procedure", procedure), slog.String("err", err.Error()))
		why := "credentials: the board cannot check them now; try again"
		if store.Unreachable(err) {
			why = "credentials: " + storeUnreachable
		}
		return identity.Caller{}, connect.NewError(connect.CodeUnavailable, why)
	}
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelInfo, "refused token", slog.String("procedure", procedure), slog.String("why", err.Error()))
		return identity.Caller{}, connect.NewError(connect.CodeUnauthenticated, "unauthenticated")
	}
	if c.Kind == identity.KindSession && !identity.CSRFMatches(h.Get(CSRFHeader), csrf) {
		return identity.Caller{}, connect.NewError(connect.CodePermissionDenied, errCSRF)
	}
	if need.session && c.Kind != identity.KindSession {
		return identity.Caller{}, connect.NewError(connect.CodePermissionDenied, "permission denied: for signed-in people only")
	}
	if c.Operates() && c.Role < need.role {
		return identity.Caller{}, connect.Errorf(connect.CodePermissionDenied, "permission denied: needs role %s", need.role)
	}
	return c, nil
}

// tokenCheck is a token whose claims hold, waiting for its row to be read
// with those of the others checked at the same moment (Board.tokenChecks):
// a fleet redialling at once costs the store a read per batch, not one per
// agent, and the link's own goroutine never runs the store's deep stack.
type tokenCheck struct {
	claim  identity.Claim
	caller identity.Caller
	err    error
}

// checkToken checks claim's row with the others in flight, unless claim
// is already refused.
func (b *Board) checkToken(claim identity.Claim, err error) (identity.Caller, error) {
	if err != nil {
		return identity.Caller{}, err
	}
	w := &tokenCheck{claim: claim}
	b.tokenChecks.add(w)
	return w.caller, w.err
}

// checkTokens reads the rows of a batch of tokenChecks at once.
func checkTokens(b *Board, batch []*tokenCheck) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	claims := make([]identity.Claim, len(batch))
	for i, w := range batch {
		claims[i] = w.claim
	}
	callers, errs := b.tokens.CheckRows(ctx, claims)
	for i, w := range batch {
		w.caller, w.err = callers[i], errs[i]
	}
}

// interceptor authenticates every RPC, puts the caller in its context,
// makes the caller's lists take turns (listTurns), refuses a request with
// a field the board does not know (strictStream), and writes one log line
// when it ends. The closure stays small, because a link
// waits inside it for as long as it lives: the work is in begin and end.
func (b *Board) interceptor() connect.ServerInterceptor {
	return func(next connect.ServerFunc) connect.ServerFunc {
		return func(ctx context.Context, spec connect.Spec, stream connect.ServerStream) error {
			call, err := b.begin(ctx, spec.Procedure)
			if err == nil && listProcedures[spec.Procedure] {
				var release func()
				if release, err = b.lists.take(call.ctx, streamKey(call.caller)); err == nil {
					defer release()
				}
			}
			if err == nil && strictProcedure(spec.Procedure) {
				stream = strictStream{stream}
			}
			if err == nil {
				err = next(call.ctx, spec, stream)
			}
			return b.end(call, err)
		}
	}
}

// call is one RPC in flight, for its log line.
type call struct {
	ctx       context.Context
	procedure string
	caller    identity.Caller
	start     time.Time
}

// begin authenticates a call: a stream holdToCredentials has
// authenticated already is not verified again.
func (b *Board) begin(ctx context.Context, procedure string) (*call, error) {
	c := &call{ctx: ctx, procedure: procedure, start: time.Now()}
	if caller, ok := authenticatedFor(ctx, procedure); ok {
		c.caller = caller
		c.ctx = identity.NewContext(ctx, caller)
		return c, nil
	}
	header := http.Header{}
	if info, ok := connect.CallInfoForServerContext(ctx); ok {
		h := info.RequestHeader()
		for _, k := range []string{"Authorization", "Cookie", CSRFHeader} {
			if v := h.Values(k); len(v) > 0 {
				header[http.CanonicalHeaderKey(k)] = v
			}
		}
	}
	caller, err := b.authenticate(ctx, procedure, header)
	if err != nil {
		return c, err
	}
	c.caller = caller
	c.ctx = identity.NewContext(ctx, caller)
	return c, nil
}

// end maps the call's error for the client and logs the call. A stream
// the board ended because its credential lapsed (streams.go) ends with
// why, whatever its handler returned.
func (b *Board) end(c *call, err error) error {
	if l := lapsedCause(c.ctx); l != nil {
		err = l.err
	}
	err = b.toConnectError(c.ctx, err)
	level := slog.LevelInfo
	if connect.CodeOf(err) == connect.CodeInternal {
		level = slog.LevelError
	}
	b.log.LogAttrs(c.ctx, level, "rpc",
		slog.String("procedure", c.procedure),
		slog.String("caller", c.caller.Name),
		slog.String("code", codeString(err)),
		slog.Duration("took", time.Since(c.start)),
	)
	return err
}

func codeString(err error) string {
	if err == nil {
		return "ok"
	}
	return connect.CodeOf(err).String()
}

// bearer reads "Bearer TOKEN" from an Authorization header value.
func bearer(h string) string {
	const prefix = "bearer "
	if len(h) > len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		return strings.TrimSpace(h[len(prefix):])
	}
	return ""
}
