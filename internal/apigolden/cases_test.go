package apigolden

import (
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// goldenCase is one saved message: testdata/<name>.binpb and
// testdata/<name>.json hold msg as v1 encoded it.
type goldenCase struct {
	name string
	msg  proto.Message
}

// at is a time of the saved messages: minutes after a fixed instant, with
// nanoseconds, so that a change to how timestamps are read shows.
func at(minutes int) *timestamppb.Timestamp {
	base := time.Date(2026, 12, 1, 9, 30, 15, 123456789, time.UTC)
	return timestamppb.New(base.Add(time.Duration(minutes) * time.Minute))
}

const (
	digestA = "sha256:6d1f8a0e3b1c2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccd"
	digestB = "sha256:0f9e8d7c6b5a49382716051423324150617f8e9dacbbcaddecff0011223344ff"
	build   = "sha256:a3c2e1f0d9b8a7968574635241302f1e0d1c2b3a495867768594a3b2c1d0e0f1"
)

func agent(name string, state boardv1.AgentState) *boardv1.Agent {
	return &boardv1.Agent{
		Name:          name,
		Description:   "Refunds orders under 500 EUR and asks above.",
		State:         state,
		Capabilities:  []string{"runs", "live-runs", "delegation", "delegation-cycle", "users", "pairing", "health"},
		Protocol:      "2",
		Build:         build,
		Tools:         []string{"orders.lookup", "orders.refund"},
		Session:       "5f0c2a9e1d3b4c6a7e8f9012",
		FirstSeenTime: at(-1440),
		LastSeenTime:  at(3),
	}
}

func rule(id string) *boardv1.Rule {
	return &boardv1.Rule{
		Id:                id,
		Agent:             "refund-*",
		Node:              "approve_refund",
		Role:              boardv1.Role_ROLE_APPROVER,
		Quorum:            proto.Int32(2),
		TimeLimit:         durationpb.New(36*time.Hour + 1500*time.Millisecond),
		RequireReason:     true,
		Description:       "Refunds are approved by two approvers.",
		CreateTime:        at(-600),
		UpdateTime:        at(-60),
		UpdatedBy:         "ops@example.com",
		AllowSelfApproval: true,
	}
}

func ruleByPeople(id string) *boardv1.Rule {
	return &boardv1.Rule{
		Id:          id,
		Agent:       "*",
		Node:        "*",
		People:      []string{"ana@example.com", "deploy-bot"},
		Quorum:      proto.Int32(1),
		Description: "Everything else goes to Ana or the deploy bot.",
		CreateTime:  at(-500),
		UpdateTime:  at(-500),
		UpdatedBy:   "admin-token",
	}
}

const showJSON = `{"amount":{"currency":"EUR","value":740.5},"items":["blender","kettle"],"order":"A-1043","express":true,"note":null}`

func show() *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{
		"amount":  map[string]any{"currency": "EUR", "value": 740.5},
		"items":   []any{"blender", "kettle"},
		"order":   "A-1043",
		"express": true,
		"note":    nil,
	})
	if err != nil {
		panic(err)
	}
	return s
}

func decision(id string, say boardv1.Say) *boardv1.ApprovalDecision {
	return &boardv1.ApprovalDecision{
		ApprovalId: id,
		Say:        say,
		Digest:     digestA,
		Who:        []string{"ana@example.com", "ben@example.com"},
		DecideTime: at(42),
		Reason:     "The customer sent photos of the damage.",
		Run:        "run-7c1e",
		Node:       "approve_refund",
		Thread:     "thread-19",
	}
}

// approval is an approval in state; a decided one carries its decision.
func approval(id string, state boardv1.ApprovalState) *boardv1.Approval {
	a := &boardv1.Approval{
		Id:         id,
		Agent:      "refund-desk",
		Run:        "run-7c1e",
		Thread:     "thread-19",
		Node:       "approve_refund",
		Ask:        "Refund 740.50 EUR for order A-1043?",
		Account:    "The order arrived damaged; the customer asks for a refund.",
		Digest:     digestA,
		State:      state,
		RuleId:     "refunds",
		CreateTime: at(0),
		ExpireTime: at(2160),
		Votes:      []string{"ana@example.com"},
		ShowJson:   showJSON,
	}
	//lint:ignore SA1019 v1 boards send the deprecated Struct beside show_json, and clients must read both
	a.Show = show()
	switch state {
	case boardv1.ApprovalState_APPROVAL_STATE_APPROVED:
		a.Decision = decision(id, boardv1.Say_SAY_YES)
		a.Votes = []string{"ana@example.com", "ben@example.com"}
	case boardv1.ApprovalState_APPROVAL_STATE_REJECTED:
		a.Decision = decision(id, boardv1.Say_SAY_NO)
	case boardv1.ApprovalState_APPROVAL_STATE_CANCELLED:
		a.Decision = decision(id, boardv1.Say_SAY_CANCELLED)
	case boardv1.ApprovalState_APPROVAL_STATE_EXPIRED:
		a.Decision = decision(id, boardv1.Say_SAY_EXPIRED)
		a.Votes = nil
	}
	return a
}

func switches(agent string) *boardv1.Switches {
	return &boardv1.Switches{
		Agent:    agent,
		Declared: []string{"orders.lookup", "orders.refund", "mail.send"},
		On:       []string{"orders.lookup", "mail.send"},
		Spoken:   true,
		SetTime:  at(-30),
		SetBy:    "ops@example.com",
	}
}

func healthRound(status boardv1.HealthStatus, model boardv1.CheckStatus, detail string) *boardv1.HealthRound {
	return &boardv1.HealthRound{
		Status: status,
		Checks: []*boardv1.HealthCheck{
			{Name: "mcp:orders", Status: model, Duration: durationpb.New(5 * time.Second), Detail: detail},
			{Name: "waiting", Status: boardv1.CheckStatus_CHECK_STATUS_OK, Duration: durationpb.New(2 * time.Millisecond)},
		},
		StartTime:   at(-60),
		ReceiveTime: at(-59),
	}
}

func agentWithHealth() *boardv1.Agent {
	a := agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)
	a.Health = healthRound(boardv1.HealthStatus_HEALTH_STATUS_DEGRADED, boardv1.CheckStatus_CHECK_STATUS_ERROR, "no answer within 5s")
	return a
}

func agentPaused(origin boardv1.PauseOrigin, delivered bool) *boardv1.Agent {
	a := agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)
	a.Pause = &boardv1.AgentPause{
		Paused: true, Reason: "The payments provider is down.", By: "ops@example.com", Time: at(-5),
		Origin: origin, Delivered: delivered,
	}
	return a
}

func user(email string, role boardv1.Role) *boardv1.User {
	return &boardv1.User{
		Id:              "u_01JDX4W6Q2",
		Email:           email,
		Name:            "Ana Lima",
		Role:            role,
		Disabled:        false,
		HasPassword:     true,
		HasVerifySecret: true,
		CreateTime:      at(-10000),
	}
}

// cases are the saved messages: every request and response of every RPC,
// every kind of LinkRequest and LinkResponse, and the bodies of /auth/.
// TestCoverage checks that nothing is missing.
func cases() []goldenCase {
	auditDetail, err := structpb.NewStruct(map[string]any{
		"say": "yes", "digest": digestA, "votes": []any{"ana@example.com"}, "quorum": 2.0,
	})
	if err != nil {
		panic(err)
	}
	var out []goldenCase
	add := func(name string, m proto.Message) { out = append(out, goldenCase{name, m}) }

	// AgentService.
	add("AgentService.ListAgents.request", &boardv1.ListAgentsRequest{PageSize: 2, PageToken: "cGFnZS0y"})
	add("AgentService.ListAgents.response", &boardv1.ListAgentsResponse{
		Agents:        []*boardv1.Agent{agent("billing", boardv1.AgentState_AGENT_STATE_OFFLINE), agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)},
		NextPageToken: "cGFnZS0z",
	})
	add("AgentService.GetAgent.request", &boardv1.GetAgentRequest{Name: "refund-desk"})
	add("AgentService.GetAgent.response", &boardv1.GetAgentResponse{Agent: agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)})
	add("AgentService.WatchAgents.request", &boardv1.WatchAgentsRequest{})
	add("AgentService.WatchAgents.response", &boardv1.WatchAgentsResponse{Agent: agent("refund-desk", boardv1.AgentState_AGENT_STATE_OFFLINE)})
	add("AgentService.WatchAgents.response.health", &boardv1.WatchAgentsResponse{Agent: agentWithHealth()})
	add("AgentService.GetHealthHistory.request", &boardv1.GetHealthHistoryRequest{Name: "refund-desk", PageSize: 50, PageToken: "aGVhbHRoLTI"})
	add("AgentService.GetHealthHistory.response", &boardv1.GetHealthHistoryResponse{
		Rounds: []*boardv1.HealthRound{
			healthRound(boardv1.HealthStatus_HEALTH_STATUS_DEGRADED, boardv1.CheckStatus_CHECK_STATUS_ERROR, "no answer within 5s"),
			healthRound(boardv1.HealthStatus_HEALTH_STATUS_UNKNOWN, boardv1.CheckStatus_CHECK_STATUS_UNKNOWN, "could not tell: the model list is not served"),
			healthRound(boardv1.HealthStatus_HEALTH_STATUS_OK, boardv1.CheckStatus_CHECK_STATUS_OK, ""),
		},
		NextPageToken: "aGVhbHRoLTM",
	})
	add("AgentService.ListAgentBuilds.request", &boardv1.ListAgentBuildsRequest{Name: "refund-desk", PageSize: 20})
	add("AgentService.ListAgentBuilds.response", &boardv1.ListAgentBuildsResponse{
		Builds: []*boardv1.AgentBuild{
			{
				Build:       "sha256:9f2c4e1a7b3d5f60818293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
				PackageName: "acme/refund-desk", PackageVersion: "1.4.0",
				FirstSeenTime: at(90), LastSeenTime: at(240), Current: true,
			},
			{
				Build:         "sha256:0b1c2d3e4f5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
				FirstSeenTime: at(0), LastSeenTime: at(60),
			},
		},
		NextPageToken: "YnVpbGRzLTI",
	})
	fleet := func(minute, online, pending int) *boardv1.FleetSample {
		return &boardv1.FleetSample{
			Time: at(minute), Minutes: 1, AgentsOnline: int32(online), ApprovalsPending: int32(pending),
			HealthOk: int32(online - 2), HealthDegraded: 1, HealthNone: 1,
			Decisions: 3, DecisionLatencyP50: durationpb.New(42 * time.Second), DecisionLatencyP99: durationpb.New(3*time.Minute + 250*time.Millisecond),
			RunsStarted: 12, RunsEnded: 11, RunsFailed: 1,
		}
	}
	add("AgentService.GetFleetHistory.request", &boardv1.GetFleetHistoryRequest{Window: durationpb.New(time.Hour)})
	add("AgentService.GetFleetHistory.response", &boardv1.GetFleetHistoryResponse{
		Resolution: boardv1.FleetResolution_FLEET_RESOLUTION_MINUTE,
		Samples:    []*boardv1.FleetSample{fleet(0, 7, 2), fleet(1, 8, 3)},
		Latest:     fleet(1, 8, 3),
	})
	add("AgentService.GetFleetHistory.response.hours", &boardv1.GetFleetHistoryResponse{
		Resolution: boardv1.FleetResolution_FLEET_RESOLUTION_HOUR,
		Samples: []*boardv1.FleetSample{{
			Time: at(0), Minutes: 60, AgentsOnline: 7, ApprovalsPending: 2, HealthOk: 7,
			Decisions: 40, DecisionLatencyP50: durationpb.New(30 * time.Second), DecisionLatencyP99: durationpb.New(10 * time.Minute),
			RunsStarted: 600, RunsEnded: 598, RunsFailed: 9,
		}},
	})
	add("AgentService.PauseAgent.request", &boardv1.PauseAgentRequest{Name: "refund-desk", Reason: "The payments provider is down."})
	add("AgentService.PauseAgent.response", &boardv1.PauseAgentResponse{Agent: agentPaused(boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD, false)})
	add("AgentService.ResumeAgent.request", &boardv1.ResumeAgentRequest{Name: "refund-desk", Reason: "Payments are back."})
	add("AgentService.ResumeAgent.response", &boardv1.ResumeAgentResponse{Agent: agentPaused(boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL, true)})
	add("AgentService.ForgetAgent.request", &boardv1.ForgetAgentRequest{Name: "refund-desk", Reason: "Retired with the old shop."})
	add("AgentService.ForgetAgent.response", &boardv1.ForgetAgentResponse{Agent: agent("refund-desk", boardv1.AgentState_AGENT_STATE_OFFLINE)})
	add("AgentService.WatchAgents.response.forgotten", &boardv1.WatchAgentsResponse{Agent: agent("refund-desk", boardv1.AgentState_AGENT_STATE_OFFLINE), Forgotten: true})

	// ApprovalService.
	add("ApprovalService.PutRule.request", &boardv1.PutRuleRequest{Rule: rule("refunds")})
	add("ApprovalService.PutRule.response", &boardv1.PutRuleResponse{Rule: rule("refunds")})
	escalating := rule("refunds-escalating")
	escalating.Escalation = []*boardv1.EscalationStep{
		{After: durationpb.New(30 * time.Minute), People: []string{"lead@example.com"}},
		{After: durationpb.New(4 * time.Hour), Role: boardv1.Role_ROLE_ADMIN},
	}
	add("ApprovalService.PutRule.request.escalation", &boardv1.PutRuleRequest{Rule: escalating})
	add("ApprovalService.ListRules.request", &boardv1.ListRulesRequest{PageSize: 10, PageToken: "cnVsZXMtMg"})
	add("ApprovalService.ListRules.response", &boardv1.ListRulesResponse{
		Rules: []*boardv1.Rule{rule("refunds"), ruleByPeople("fallback")}, NextPageToken: "cnVsZXMtMw",
	})
	add("ApprovalService.DeleteRule.request", &boardv1.DeleteRuleRequest{Id: "refunds"})
	add("ApprovalService.DeleteRule.response", &boardv1.DeleteRuleResponse{})
	add("ApprovalService.PreviewRule.request", &boardv1.PreviewRuleRequest{Rule: rule("refund-large")})
	add("ApprovalService.PreviewRule.response", &boardv1.PreviewRuleResponse{
		Agents: []string{"refund-desk", "refund-desk-eu"},
		Matches: []*boardv1.RuleMatch{
			{Agent: "refund-desk", Node: "pay", GovernedBy: "all", WouldGovern: true, Approvals: 12},
			{Agent: "refund-desk", Node: "wire", GovernedBy: "keep-wire", Approvals: 3},
			{Agent: "refund-desk-eu", Node: "pay", WouldGovern: true, Approvals: 1},
		},
		MatchesTruncated: true,
	})
	add("ApprovalService.ListApprovals.request", &boardv1.ListApprovalsRequest{
		State: boardv1.ApprovalState_APPROVAL_STATE_PENDING, Agent: "refund-desk", PageSize: 25, PageToken: "YXBwLTI",
	})
	add("ApprovalService.ListApprovals.request.filters", &boardv1.ListApprovalsRequest{
		State: boardv1.ApprovalState_APPROVAL_STATE_APPROVED, RuleId: "refunds", Since: at(-1440), Until: at(0),
	})
	add("ApprovalService.ListApprovals.response", &boardv1.ListApprovalsResponse{
		Approvals: []*boardv1.Approval{
			approval("ap_pending", boardv1.ApprovalState_APPROVAL_STATE_PENDING),
			approval("ap_approved", boardv1.ApprovalState_APPROVAL_STATE_APPROVED),
			approval("ap_rejected", boardv1.ApprovalState_APPROVAL_STATE_REJECTED),
			approval("ap_cancelled", boardv1.ApprovalState_APPROVAL_STATE_CANCELLED),
			approval("ap_expired", boardv1.ApprovalState_APPROVAL_STATE_EXPIRED),
			approval("ap_superseded", boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED),
		},
		NextPageToken: "YXBwLTM",
	})
	add("ApprovalService.GetApproval.request", &boardv1.GetApprovalRequest{Id: "ap_pending"})
	add("ApprovalService.GetApproval.response", &boardv1.GetApprovalResponse{Approval: approval("ap_approved", boardv1.ApprovalState_APPROVAL_STATE_APPROVED)})
	add("ApprovalService.Decide.request", &boardv1.DecideRequest{
		Id: "ap_pending", Say: boardv1.Say_SAY_YES, Digest: digestA, Reason: "The customer sent photos of the damage.",
	})
	add("ApprovalService.Decide.request.no", &boardv1.DecideRequest{Id: "ap_pending", Say: boardv1.Say_SAY_NO, Digest: digestA})
	add("ApprovalService.Decide.response", &boardv1.DecideResponse{Approval: approval("ap_pending", boardv1.ApprovalState_APPROVAL_STATE_PENDING)})
	add("ApprovalService.Cancel.request", &boardv1.CancelRequest{Id: "ap_pending", Reason: "The order was withdrawn."})
	add("ApprovalService.Cancel.response", &boardv1.CancelResponse{Approval: approval("ap_pending", boardv1.ApprovalState_APPROVAL_STATE_CANCELLED)})
	add("ApprovalService.Decide.request.consent", &boardv1.DecideRequest{
		Id: "ap_pending", Say: boardv1.Say_SAY_YES, Digest: digestA,
		Consent: &boardv1.StandingConsent{Duration: durationpb.New(8 * time.Hour), Uses: 20},
	})
	add("ApprovalService.OpenActionLink.request", &boardv1.OpenActionLinkRequest{Link: "AQ1hY3QtMGY0ZTJhOWMxYjNkNWU3Zg"})
	add("ApprovalService.OpenActionLink.response", &boardv1.OpenActionLinkResponse{
		Approval: approval("ap_pending", boardv1.ApprovalState_APPROVAL_STATE_PENDING), ExpiresAt: at(1440),
	})
	add("ApprovalService.Decide.request.action_link", &boardv1.DecideRequest{
		Id: "ap_pending", Say: boardv1.Say_SAY_YES, Digest: digestA, ActionLink: "AQ1hY3QtMGY0ZTJhOWMxYjNkNWU3Zg",
	})
	consentActive := &boardv1.Consent{
		Id: "con-1", Agent: "refund-desk", Digest: digestA, RuleId: "refunds", ApprovalId: "ap_pending", CreatedBy: "ann@example.com",
		CreateTime: at(0), ExpireTime: at(480), UsesAllowed: 20, Uses: 3, State: "active",
	}
	consentRevoked := &boardv1.Consent{
		Id: "con-0", Agent: "refund-desk", Digest: digestA, RuleId: "refunds", ApprovalId: "ap_old", CreatedBy: "ann@example.com",
		CreateTime: at(-600), ExpireTime: at(-120), Uses: 7, RevokeTime: at(-300), RevokedBy: "bob@example.com", State: "revoked",
	}
	add("ApprovalService.ListConsents.request", &boardv1.ListConsentsRequest{Agent: "refund-desk", ActiveOnly: false, PageSize: 20, PageToken: "Y29uLTI"})
	add("ApprovalService.ListConsents.response", &boardv1.ListConsentsResponse{Consents: []*boardv1.Consent{consentActive, consentRevoked}, NextPageToken: "Y29uLTM"})
	add("ApprovalService.RevokeConsent.request", &boardv1.RevokeConsentRequest{Id: "con-0", Reason: "Ask again for every refund."})
	add("ApprovalService.RevokeConsent.response", &boardv1.RevokeConsentResponse{Consent: consentRevoked})
	add("ApprovalService.WatchApprovals.request", &boardv1.WatchApprovalsRequest{Agent: "refund-desk", History: proto.Int32(50)})
	for _, e := range []struct {
		name  string
		event boardv1.ApprovalEvent
		state boardv1.ApprovalState // unspecified: no approval
	}{
		{"snapshot", boardv1.ApprovalEvent_APPROVAL_EVENT_SNAPSHOT, boardv1.ApprovalState_APPROVAL_STATE_PENDING},
		{"synced", boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED, boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED},
		{"raised", boardv1.ApprovalEvent_APPROVAL_EVENT_RAISED, boardv1.ApprovalState_APPROVAL_STATE_PENDING},
		{"superseded", boardv1.ApprovalEvent_APPROVAL_EVENT_SUPERSEDED, boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED},
		{"voted", boardv1.ApprovalEvent_APPROVAL_EVENT_VOTED, boardv1.ApprovalState_APPROVAL_STATE_PENDING},
		{"decided", boardv1.ApprovalEvent_APPROVAL_EVENT_DECIDED, boardv1.ApprovalState_APPROVAL_STATE_REJECTED},
		{"cancelled", boardv1.ApprovalEvent_APPROVAL_EVENT_CANCELLED, boardv1.ApprovalState_APPROVAL_STATE_CANCELLED},
		{"expired", boardv1.ApprovalEvent_APPROVAL_EVENT_EXPIRED, boardv1.ApprovalState_APPROVAL_STATE_EXPIRED},
		{"heartbeat", boardv1.ApprovalEvent_APPROVAL_EVENT_HEARTBEAT, boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED},
		{"escalated", boardv1.ApprovalEvent_APPROVAL_EVENT_ESCALATED, boardv1.ApprovalState_APPROVAL_STATE_PENDING},
	} {
		m := &boardv1.WatchApprovalsResponse{Event: e.event}
		if e.state != boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED {
			m.Approval = approval("ap_"+e.name, e.state)
		}
		add("ApprovalService.WatchApprovals.response."+e.name, m)
	}

	// AuditService.
	add("AuditService.ListAudit.request", &boardv1.ListAuditRequest{AfterSeq: 41, PageSize: 100, PageToken: "YXVkaXQtMg"})
	add("AuditService.ListAudit.request.filtered", &boardv1.ListAuditRequest{
		PageSize: 50, Actor: "ana@example.com", Action: "approval.", Subject: "ap_pending",
		Since: at(40), Until: at(50), NewestFirst: true,
	})
	add("AuditService.VerifyAudit.request", &boardv1.VerifyAuditRequest{})
	add("AuditService.VerifyAudit.response.ok", &boardv1.VerifyAuditResponse{
		Ok: true, Entries: 43, Head: "sha256:3333333333333333333333333333333333333333333333333333333333333333",
	})
	add("AuditService.VerifyAudit.response.broken", &boardv1.VerifyAuditResponse{
		Entries: 41, Head: "sha256:1111111111111111111111111111111111111111111111111111111111111111",
		BadSeq: 42, Why: "hash does not match its contents",
	})
	add("AuditService.ListAudit.response", &boardv1.ListAuditResponse{
		Entries: []*boardv1.AuditEntry{{
			Seq:        42,
			RecordTime: at(42),
			Actor:      "ana@example.com",
			Action:     "approval.decide",
			Subject:    "ap_pending",
			Detail:     auditDetail,
			Prev:       "sha256:1111111111111111111111111111111111111111111111111111111111111111",
			Hash:       "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		}, {
			Seq:        43,
			RecordTime: at(43),
			Actor:      "board",
			Action:     "approval.expire",
			Subject:    "ap_expired",
			Prev:       "sha256:2222222222222222222222222222222222222222222222222222222222222222",
			Hash:       "sha256:3333333333333333333333333333333333333333333333333333333333333333",
		}},
		NextPageToken: "YXVkaXQtMw",
	})

	// ConversationService.
	add("ConversationService.ListConversations.request", &boardv1.ListConversationsRequest{Agent: "refund-desk", PageSize: 20, PageToken: "Y29udi0y"})
	add("ConversationService.ListConversations.response", &boardv1.ListConversationsResponse{
		Conversations: []*boardv1.ConversationPointer{
			{Agent: "refund-desk", Thread: "thread-19", UpdateTime: at(5), Waiting: true, People: []string{"ana@example.com", "ben@example.com"}},
			{Agent: "refund-desk", Thread: "thread-7", UpdateTime: at(-90)},
		},
		NextPageToken: "Y29udi0z",
	})

	// ToolService.
	add("ToolService.ListServers.request", &boardv1.ListServersRequest{PageSize: 50, PageToken: "c2Vydi0y"})
	add("ToolService.ListServers.response", &boardv1.ListServersResponse{
		Servers: []*boardv1.Server{{
			Name: "orders",
			Tools: []*boardv1.ServerTool{
				{Name: "lookup", Agents: []string{"billing", "refund-desk"}, On: []string{"billing", "refund-desk"}},
				{Name: "refund", Agents: []string{"refund-desk"}},
			},
			Agents: []string{"billing", "refund-desk"},
			Online: []string{"refund-desk"},
		}},
		NextPageToken: "c2Vydi0z",
	})
	add("ToolService.GetSwitches.request", &boardv1.GetSwitchesRequest{Agent: "refund-desk"})
	add("ToolService.GetSwitches.response", &boardv1.GetSwitchesResponse{Switches: switches("refund-desk")})
	add("ToolService.ReplaceSwitches.request", &boardv1.ReplaceSwitchesRequest{Agent: "refund-desk", On: []string{"orders.lookup", "mail.send"}})
	add("ToolService.ReplaceSwitches.response", &boardv1.ReplaceSwitchesResponse{Switches: switches("refund-desk"), Pushed: true})
	add("ToolService.SetToolSwitch.request", &boardv1.SetToolSwitchRequest{Agent: "refund-desk", Tool: "mail.send", On: true})
	add("ToolService.SetToolSwitch.response", &boardv1.SetToolSwitchResponse{Switches: switches("refund-desk"), Pushed: true})
	add("ToolService.ListSwitches.request", &boardv1.ListSwitchesRequest{PageSize: 100, PageToken: "c3ctMg"})
	add("ToolService.ListSwitches.response", &boardv1.ListSwitchesResponse{
		Switches:      []*boardv1.Switches{switches("billing"), switches("refund-desk")},
		NextPageToken: "c3ctMw",
	})

	// UserService.
	add("UserService.Me.request", &boardv1.MeRequest{})
	add("UserService.Me.response", &boardv1.MeResponse{
		Kind: boardv1.CallerKind_CALLER_KIND_SESSION, Name: "ana@example.com", Role: boardv1.Role_ROLE_ADMIN,
		User: user("ana@example.com", boardv1.Role_ROLE_ADMIN),
	})
	add("UserService.Me.response.operator", &boardv1.MeResponse{
		Kind: boardv1.CallerKind_CALLER_KIND_OPERATOR, Name: "deploy-bot", Role: boardv1.Role_ROLE_VIEWER,
	})
	add("UserService.ListUsers.request", &boardv1.ListUsersRequest{PageSize: 100, PageToken: "dXNlcnMtMg"})
	add("UserService.ListUsers.response", &boardv1.ListUsersResponse{
		Users: []*boardv1.User{
			user("ana@example.com", boardv1.Role_ROLE_ADMIN),
			{Id: "u_01JDX4W6Q3", Email: "ben@example.com", Name: "Ben", Role: boardv1.Role_ROLE_VIEWER, Disabled: true, CreateTime: at(-9000)},
		},
		NextPageToken: "dXNlcnMtMw",
	})
	add("UserService.AddUser.request", &boardv1.AddUserRequest{Email: "ben@example.com", Name: "Ben", Role: boardv1.Role_ROLE_APPROVER})
	add("UserService.AddUser.response", &boardv1.AddUserResponse{
		User:            &boardv1.User{Id: "u_01JDX4W6Q3", Email: "ben@example.com", Name: "Ben", Role: boardv1.Role_ROLE_APPROVER, CreateTime: at(0)},
		SetupPath:       "/setup#token=c2V0dXAtdG9rZW4",
		SetupExpireTime: at(1440),
	})
	add("UserService.SetUserRole.request", &boardv1.SetUserRoleRequest{UserId: "u_01JDX4W6Q3", Role: boardv1.Role_ROLE_ADMIN})
	add("UserService.SetUserRole.response", &boardv1.SetUserRoleResponse{User: user("ben@example.com", boardv1.Role_ROLE_ADMIN)})
	add("UserService.DisableUser.request", &boardv1.DisableUserRequest{UserId: "u_01JDX4W6Q3"})
	add("UserService.DisableUser.response", &boardv1.DisableUserResponse{
		User:          &boardv1.User{Id: "u_01JDX4W6Q3", Email: "ben@example.com", Name: "Ben", Role: boardv1.Role_ROLE_VIEWER, Disabled: true, HasPassword: true, CreateTime: at(-9000)},
		SessionsEnded: 3,
	})
	add("UserService.EnableUser.request", &boardv1.EnableUserRequest{UserId: "u_01JDX4W6Q3"})
	add("UserService.EnableUser.response", &boardv1.EnableUserResponse{User: user("ben@example.com", boardv1.Role_ROLE_VIEWER)})
	add("UserService.SetVerifySecret.request", &boardv1.SetVerifySecretRequest{Secret: "correct horse battery"})
	add("UserService.SetVerifySecret.response", &boardv1.SetVerifySecretResponse{})
	add("UserService.EnterPairingCode.request", &boardv1.EnterPairingCodeRequest{Code: "K7RM-4XQP"})
	add("UserService.EnterPairingCode.response", &boardv1.EnterPairingCodeResponse{Agent: "refund-desk", Thread: "thread-19"})
	add("UserService.GetIdentify.request", &boardv1.GetIdentifyRequest{})
	add("UserService.GetIdentify.response", &boardv1.GetIdentifyResponse{Door: boardv1.Door_DOOR_PAIRING})
	add("UserService.SetIdentify.request", &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_VERIFY})
	add("UserService.SetIdentify.response", &boardv1.SetIdentifyResponse{Door: boardv1.Door_DOOR_VERIFY})
	add("UserService.SetIdentify.response.none", &boardv1.SetIdentifyResponse{Door: boardv1.Door_DOOR_NONE})

	// AgentLinkService.Link, agent to board: one of each kind.
	req := func(kind string, m *boardv1.LinkRequest) { add("AgentLinkService.Link.request."+kind, m) }
	req("hello", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name:         "refund-desk",
		Protocol:     "2",
		Capabilities: []string{"runs", "live-runs", "delegation", "delegation-cycle", "users", "pairing", "health", "pause"},
		Build:        build,
		Tools:        []string{"orders.lookup", "orders.refund"},
		Description:  "Refunds orders under 500 EUR and asks above.",
	}}})
	req("ping", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 7, SendTime: at(1)}}})
	req("ping_round_trip", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 8, SendTime: at(2), LastRoundTrip: durationpb.New(1500 * time.Microsecond)}}})
	req("pong", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pong{Pong: &boardv1.Pong{Seq: 3, SendTime: at(1)}}})
	req("who_decides", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_WhoDecides{WhoDecides: &boardv1.WhoDecides{RequestId: "q1", Node: "approve_refund"}}})
	req("raise", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
		RequestId: "q2",
		Run:       "run-7c1e",
		Thread:    "thread-19",
		Node:      "approve_refund",
		Ask:       "Refund 740.50 EUR for order A-1043?",
		Show:      showJSON,
		Account:   "The order arrived damaged; the customer asks for a refund.",
		Digest:    digestA,
	}}})
	req("how_to_identify", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_HowToIdentify{HowToIdentify: &boardv1.HowToIdentify{RequestId: "q3"}}})
	req("pair", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pair{Pair: &boardv1.Pair{RequestId: "q4", Thread: "thread-19"}}})
	req("verify", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Verify{Verify: &boardv1.Verify{RequestId: "q5", Who: "ana@example.com", Secret: "correct horse battery"}}})
	req("conversations", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Conversations{Conversations: &boardv1.Conversations{
		Conversations: []*boardv1.ConversationPointer{
			{Thread: "thread-19", UpdateTime: at(5), Waiting: true, People: []string{"ana@example.com"}},
			{Thread: "thread-7", UpdateTime: at(-90)},
		},
		Full: true,
	}}})
	req("withdraw", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Withdraw{Withdraw: &boardv1.Withdraw{
		RequestId: "q6", Run: "run-7c1e", Node: "approve_refund", Reason: "The customer called to cancel.",
	}}})
	req("hello.3", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name:         "refund-desk",
		Protocol:     "3",
		Capabilities: []string{"users", "pairing", "health", "pause"},
		Build:        build,
		Tools:        []string{"orders.lookup", "orders.refund"},
		Description:  "Refunds orders under 500 EUR and asks above.",
	}}})
	req("health", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Health{Health: &boardv1.HealthReport{
		Status:    boardv1.HealthStatus_HEALTH_STATUS_DEGRADED,
		Checks:    healthRound(boardv1.HealthStatus_HEALTH_STATUS_DEGRADED, boardv1.CheckStatus_CHECK_STATUS_ERROR, "no answer within 5s").GetChecks(),
		StartTime: at(-60),
	}}})
	req("pause_state", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_PauseState{PauseState: &boardv1.PauseState{
		Paused: true, Reason: "Disk full on the host.", By: "alice", Time: at(-3), Origin: boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL,
	}}})

	// AgentLinkService.Link, board to agent: one of each kind, and an
	// error of each code.
	resp := func(kind string, m *boardv1.LinkResponse) { add("AgentLinkService.Link.response."+kind, m) }
	resp("welcome", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{
		Session:      "5f0c2a9e1d3b4c6a7e8f9012",
		Protocol:     "2",
		PingInterval: durationpb.New(15 * time.Second),
		PingTimeout:  durationpb.New(10 * time.Second),
		RedialWithin: durationpb.New(5*time.Second + 250*time.Millisecond),
	}}})
	ranged := &boardv1.Welcome{
		Session:      "5f0c2a9e1d3b4c6a7e8f9013",
		Protocol:     "3",
		PingInterval: durationpb.New(15 * time.Second),
		PingTimeout:  durationpb.New(10 * time.Second),
		RedialWithin: durationpb.New(250 * time.Millisecond),
		MinProtocol:  "2",
		MaxProtocol:  "3",
	}
	resp("welcome.range", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: ranged}})
	accepting := proto.CloneOf(ranged)
	accepting.Session, accepting.Accepts = "5f0c2a9e1d3b4c6a7e8f9014", []string{"run_events"}
	resp("welcome.accepts", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: accepting}})
	resp("pause", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pause{Pause: &boardv1.Pause{
		Paused: true, Reason: "The payments provider is down.", By: "ops@example.com", Time: at(-5),
	}}})
	resp("ping", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Ping{Ping: &boardv1.Ping{Seq: 3, SendTime: at(1)}}})
	resp("pong", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{
		Seq: 7, SendTime: at(1), RedialWithin: durationpb.New(750 * time.Millisecond),
	}}})
	resp("who_decides_answer", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_WhoDecidesAnswer{WhoDecidesAnswer: &boardv1.WhoDecidesAnswer{
		RequestId: "q1", Ruling: boardv1.Ruling_RULING_GOVERNED, RuleId: "refunds", Role: boardv1.Role_ROLE_APPROVER, Quorum: 2,
	}}})
	resp("who_decides_answer.people", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_WhoDecidesAnswer{WhoDecidesAnswer: &boardv1.WhoDecidesAnswer{
		RequestId: "q1", Ruling: boardv1.Ruling_RULING_GOVERNED, RuleId: "fallback", People: []string{"ana@example.com", "deploy-bot"}, Quorum: 1,
	}}})
	resp("who_decides_answer.not_governed", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_WhoDecidesAnswer{WhoDecidesAnswer: &boardv1.WhoDecidesAnswer{
		RequestId: "q1", Ruling: boardv1.Ruling_RULING_NOT_GOVERNED,
	}}})
	resp("raised", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Raised{Raised: &boardv1.Raised{
		RequestId: "q2", ApprovalId: "ap_pending", State: boardv1.ApprovalState_APPROVAL_STATE_PENDING,
	}}})
	resp("raised.decided", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Raised{Raised: &boardv1.Raised{
		RequestId: "q2", ApprovalId: "ap_approved", State: boardv1.ApprovalState_APPROVAL_STATE_APPROVED,
		Decision: decision("ap_approved", boardv1.Say_SAY_YES),
	}}})
	for _, e := range []struct {
		name string
		code boardv1.LinkErrorCode
		id   string
		msg  string
	}{
		{"invalid_argument", boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT, "q2", "raise.digest: want sha256: and 64 lower-case hex digits"},
		{"not_found", boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND, "q6", "withdraw: no such approval"},
		{"resource_exhausted", boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED, "q2", "raise: 200 approvals pending, at most 200"},
		{"failed_precondition", boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION, "q4", "pair: the board does not pair people"},
		{"internal", boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL, "q1", "who_decides: internal error"},
		{"unavailable", boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE, "", "conversations: the board cannot record them now; try again"},
	} {
		resp("error."+e.name, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Error{Error: &boardv1.LinkError{
			RequestId: e.id, Code: e.code, Message: e.msg,
		}}})
	}
	resp("decision", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Decision{Decision: decision("ap_rejected", boardv1.Say_SAY_NO)}})
	resp("switches", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Switches{Switches: &boardv1.ToolSwitches{
		On: []string{"orders.lookup", "mail.send"}, Spoken: true,
	}}})
	resp("how_to_identify_answer", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_HowToIdentifyAnswer{HowToIdentifyAnswer: &boardv1.HowToIdentifyAnswer{
		RequestId: "q3", Door: boardv1.Door_DOOR_PAIRING,
	}}})
	resp("pair_code", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_PairCode{PairCode: &boardv1.PairCode{
		RequestId: "q4", Code: "K7RM4XQP", ExpireTime: at(10),
	}}})
	resp("verified", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Verified{Verified: &boardv1.Verified{
		RequestId: "q5", Ok: true, Address: "ana@example.com", Name: "Ana Lima",
	}}})
	resp("verified.not", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Verified{Verified: &boardv1.Verified{
		RequestId: "q5", Why: "unknown address or wrong secret",
	}}})
	resp("paired", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Paired{Paired: &boardv1.Paired{
		Id: "pr_01JDX5", Thread: "thread-19", Who: "ana@example.com", Name: "Ana Lima", PairTime: at(4),
	}}})
	resp("withdrawn", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Withdrawn{Withdrawn: &boardv1.Withdrawn{
		RequestId: "q6", ApprovalId: "ap_pending", State: boardv1.ApprovalState_APPROVAL_STATE_CANCELLED,
	}}})

	resp("run_stored", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_RunStored{RunStored: &boardv1.RunStored{RunId: runID, Seq: 9}}})
	resp("fire", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Fire{Fire: &boardv1.Fire{
		RequestId: "q7", Input: fireInput(), Thread: "thread-20", By: "ops@example.com",
	}}})
	resp("stop", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Stop{Stop: &boardv1.Stop{
		RequestId: "q8", RunId: runID, Reason: "Wrong customer.", By: "ops@example.com",
	}}})
	req("hello.inputs", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name:         "refund-desk",
		Protocol:     "3",
		Capabilities: []string{"users", "pairing", "health", "pause", "runs", "live-runs", "fire"},
		Build:        build,
		Description:  "Refunds orders under 500 EUR and asks above.",
		Inputs:       flowInputs(),
	}}})
	req("hello.package", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name:         "refund-desk",
		Protocol:     "3",
		Capabilities: []string{"users", "health", "pause", "runs"},
		Build:        build,
		Package:      installed(),
	}}})
	req("raise.run_id", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
		RequestId: "q2", Run: "run-7c1e", Thread: "thread-19", Node: "approve_refund",
		Ask: "Refund 740.50 EUR for order A-1043?", Show: showJSON, Digest: digestA, RunId: runID,
	}}})
	req("raise.traceparent", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
		RequestId: "q2", Run: "run-7c1e", Thread: "thread-19", Node: "approve_refund",
		Ask: "Refund 740.50 EUR for order A-1043?", Show: showJSON, Digest: digestA, RunId: runID,
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}}})
	traced := decision("ap_approved", boardv1.Say_SAY_YES)
	traced.Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"
	resp("decision.traceparent", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Decision{Decision: traced}})
	event := func(kind string, seq uint32, e *boardv1.RunEvent) {
		e.RunId, e.Seq, e.Time = runID, seq, at(int(seq))
		req("run_event."+kind, &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: e}})
	}
	event("start", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{
		Thread: "thread-19", StartedBy: "chat", StartedByWho: "ana@example.com", Build: build,
	}}})
	event("step", 2, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Step{Step: runSteps()[0]}})
	event("pause", 3, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Pause{Pause: &boardv1.RunPause{
		Kind: boardv1.PauseKind_PAUSE_KIND_APPROVAL, Node: "approve_refund", ApprovalId: "ap_pending",
	}}})
	event("resume", 4, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Resume{Resume: &boardv1.RunResume{}}})
	event("start.delegation", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{
		Thread: "thread-19", StartedBy: "delegation", Build: build, Delegation: runDelegation(),
	}}})
	event("delegation_failed", 5, &boardv1.RunEvent{Kind: &boardv1.RunEvent_DelegationFailed{DelegationFailed: &boardv1.DelegationFailure{
		Node: "ask_billing", Target: "refund-desk", Code: "AGENT_RECURSION",
		Message: "refund-desk is already in the chain refund-desk → billing", Chain: []string{"refund-desk", "billing"},
	}}})
	entered, finished := runSteps()[0], runSteps()[0]
	entered.Outcome, entered.Duration, entered.Tokens = boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED, nil, nil
	req("run_events", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvents{RunEvents: &boardv1.RunEvents{Events: []*boardv1.RunEvent{
		{RunId: runID, Seq: 6, Time: at(6), Kind: &boardv1.RunEvent_Step{Step: entered}},
		{RunId: runID, Seq: 7, Time: at(7), Kind: &boardv1.RunEvent_Step{Step: finished}},
	}}}})
	req("run_summary", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{Run: runOf(true), Seq: 9}}})
	req("run_summary.dropped", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{Run: pausedRun(), Seq: 4, Dropped: 3}}})
	req("fired", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Fired{Fired: &boardv1.Fired{RequestId: "q7", RunId: runID, Thread: "thread-20"}}})
	req("stopped", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Stopped{Stopped: &boardv1.Stopped{RequestId: "q8"}}})

	// RunService, and what runs added to agents and approvals.
	withInputs := agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)
	withInputs.Inputs = flowInputs()
	withInputs.RunsDropped = 3
	add("AgentService.GetAgent.response.inputs", &boardv1.GetAgentResponse{Agent: withInputs})
	withRun := approval("ap_pending", boardv1.ApprovalState_APPROVAL_STATE_PENDING)
	withRun.RunId = runID
	add("ApprovalService.GetApproval.response.run_id", &boardv1.GetApprovalResponse{Approval: withRun})
	withAmounts := approval("ap_pending", boardv1.ApprovalState_APPROVAL_STATE_PENDING)
	withAmounts.Amounts = []*boardv1.Amount{{Text: "740.50 EUR", Value: 740.5, Currency: "EUR"}}
	add("ApprovalService.GetApproval.response.amounts", &boardv1.GetApprovalResponse{Approval: withAmounts})
	add("RunService.ListRuns.request", &boardv1.ListRunsRequest{
		Agent: "refund-desk", State: boardv1.RunState_RUN_STATE_FAILED, Thread: "thread-19",
		StartAfter: at(-1440), StartBefore: at(0), PageSize: 25, PageToken: "cnVucy0y",
	})
	listed := runOf(false)
	listed.Steps = nil
	running := runOf(false)
	running.Id, running.State, running.EndTime, running.Error, running.Steps = "0b5e", boardv1.RunState_RUN_STATE_RUNNING, nil, "", nil
	add("RunService.ListRuns.response", &boardv1.ListRunsResponse{Runs: []*boardv1.Run{running, listed}, NextPageToken: "cnVucy0z"})
	add("RunService.GetRun.request", &boardv1.GetRunRequest{Agent: "refund-desk", Id: runID})
	add("RunService.GetRun.response", &boardv1.GetRunResponse{Run: runOf(false)})
	add("RunService.GetRun.response.paused", &boardv1.GetRunResponse{Run: pausedRun()})
	add("RunService.WatchRuns.request", &boardv1.WatchRunsRequest{Agent: "refund-desk", Run: runID})
	add("RunService.WatchRuns.response", &boardv1.WatchRunsResponse{Kind: boardv1.RunEventKind_RUN_EVENT_KIND_STEP, Run: running, Step: runSteps()[1]})
	for _, k := range []boardv1.RunEventKind{
		boardv1.RunEventKind_RUN_EVENT_KIND_SNAPSHOT, boardv1.RunEventKind_RUN_EVENT_KIND_STARTED,
		boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED, boardv1.RunEventKind_RUN_EVENT_KIND_RESUMED,
		boardv1.RunEventKind_RUN_EVENT_KIND_ENDED,
	} {
		r := runOf(false)
		r.Steps, r.StepsTruncated = nil, false
		switch k {
		case boardv1.RunEventKind_RUN_EVENT_KIND_SNAPSHOT, boardv1.RunEventKind_RUN_EVENT_KIND_STARTED, boardv1.RunEventKind_RUN_EVENT_KIND_RESUMED:
			r.State, r.EndTime, r.Error = boardv1.RunState_RUN_STATE_RUNNING, nil, ""
		case boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED:
			r.State, r.EndTime, r.Error, r.Pause, r.PausedAt = boardv1.RunState_RUN_STATE_PAUSED, nil, "", boardv1.PauseKind_PAUSE_KIND_ASK, "clarify"
		case boardv1.RunEventKind_RUN_EVENT_KIND_ENDED:
			r.State, r.Error = boardv1.RunState_RUN_STATE_FINISHED, ""
		}
		name := strings.ToLower(strings.TrimPrefix(k.String(), "RUN_EVENT_KIND_"))
		add("RunService.WatchRuns.response."+name, &boardv1.WatchRunsResponse{Kind: k, Run: r})
	}
	add("RunService.WatchRuns.response.synced", &boardv1.WatchRunsResponse{Kind: boardv1.RunEventKind_RUN_EVENT_KIND_SYNCED})
	add("RunService.WatchRuns.response.heartbeat", &boardv1.WatchRunsResponse{Kind: boardv1.RunEventKind_RUN_EVENT_KIND_HEARTBEAT})
	stopped := runOf(false)
	stopped.Steps, stopped.StepsTruncated, stopped.State, stopped.Error = nil, false, boardv1.RunState_RUN_STATE_STOPPED, "flow: the run was stopped: Wrong customer."
	add("RunService.ListRuns.response.stopped", &boardv1.ListRunsResponse{Runs: []*boardv1.Run{stopped}})
	add("RunService.StartRun.request", &boardv1.StartRunRequest{Agent: "refund-desk", Input: fireInput(), Thread: "thread-20"})
	add("RunService.StartRun.response", &boardv1.StartRunResponse{RunId: runID, Thread: "thread-20"})
	// Delegation: a run's tree, the failures, an agent's cycles.
	child := runOf(false)
	child.Id, child.StartedBy, child.Delegation = "9b1c7d3e5f2a4b6c8d0e1f2a3b4c5d6e", "delegation", runDelegation()
	child.Steps = nil
	rootRun := runOf(false)
	rootRun.Steps = nil
	add("RunService.GetRunTree.request", &boardv1.GetRunTreeRequest{Agent: "refund-desk", Id: child.Id})
	add("RunService.GetRunTree.response", &boardv1.GetRunTreeResponse{Root: &boardv1.RunTreeNode{Run: rootRun,
		Children: []*boardv1.RunTreeNode{{Run: child}}}})
	add("RunService.GetRunTree.response.truncated", &boardv1.GetRunTreeResponse{Root: &boardv1.RunTreeNode{Run: rootRun}, Truncated: true})
	add("RunService.ListDelegationFailures.request", &boardv1.ListDelegationFailuresRequest{Agent: "refund-desk", Code: "AGENT_RECURSION", PageSize: 50, PageToken: "ZmFpbHVyZXMtMg"})
	add("RunService.ListDelegationFailures.response", &boardv1.ListDelegationFailuresResponse{Failures: []*boardv1.DelegationFailure{{
		Agent: "refund-desk", RunId: runID, Node: "ask_billing", Target: "refund-desk", Code: "AGENT_RECURSION",
		Message: "refund-desk is already in the chain refund-desk → billing", Chain: []string{"refund-desk", "billing"},
		InvocationId: "inv-3", Time: at(5),
	}}, NextPageToken: "ZmFpbHVyZXMtMw"})
	for name, c := range map[string]*boardv1.DelegationCycles{
		"cannot_tell":   {Knowledge: boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_CANNOT_TELL},
		"none_reported": {Knowledge: boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_NONE_REPORTED},
		"reported":      {Knowledge: boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_REPORTED, Count: 2, LastTime: at(5)},
	} {
		a := agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)
		a.DelegationCycles = c
		add("AgentService.GetAgent.response.cycles_"+name, &boardv1.GetAgentResponse{Agent: a})
	}

	// AlertService.
	alertRule := &boardv1.AlertRule{Id: "loops", Agent: "refund-*", Condition: boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE,
		Window: durationpb.New(24 * time.Hour), Description: "Tell us when a refund agent delegates in a circle.",
		CreateTime: at(-60), UpdateTime: at(0), UpdatedBy: "ana@example.com"}
	add("AlertService.PutAlertRule.request", &boardv1.PutAlertRuleRequest{Rule: &boardv1.AlertRule{Agent: "refund-*",
		Condition: boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE, Description: alertRule.Description}})
	add("AlertService.PutAlertRule.response", &boardv1.PutAlertRuleResponse{Rule: alertRule})
	add("AlertService.ListAlertRules.request", &boardv1.ListAlertRulesRequest{})
	add("AlertService.ListAlertRules.response", &boardv1.ListAlertRulesResponse{Rules: []*boardv1.AlertRule{alertRule}})
	add("AlertService.DeleteAlertRule.request", &boardv1.DeleteAlertRuleRequest{Id: "loops"})
	add("AlertService.DeleteAlertRule.response", &boardv1.DeleteAlertRuleResponse{})
	add("AlertService.ListAlerts.request", &boardv1.ListAlertsRequest{RuleId: "loops", Agent: "refund-desk", IncludeQuiet: true, PageSize: 2, PageToken: "YWxlcnRzLTI"})
	add("AlertService.ListAlerts.response", &boardv1.ListAlertsResponse{Alerts: []*boardv1.Alert{
		{RuleId: "loops", Agent: "refund-billing", State: boardv1.AlertState_ALERT_STATE_CANNOT_TELL,
			Reason: "the agent's last hello did not announce delegation-cycle: it would not report a circular delegation, so its silence says nothing"},
		{RuleId: "loops", Agent: "refund-desk", State: boardv1.AlertState_ALERT_STATE_FIRING, Count: 2, LastTime: at(5),
			Reason: "2 circular delegation(s) (AGENT_RECURSION) reported in the last 24h, the latest at 2026-12-01T09:35:15Z"},
		{RuleId: "loops", Agent: "refund-triage", State: boardv1.AlertState_ALERT_STATE_QUIET,
			Reason: "no circular delegation reported in the last 24h; the agent announces delegation-cycle"},
	}, NextPageToken: "YWxlcnRzLTM"})
	add("RunService.StopRun.request", &boardv1.StopRunRequest{Agent: "refund-desk", Id: runID, Reason: "Wrong customer."})
	add("RunService.StopRun.response", &boardv1.StopRunResponse{})

	// ChatService, and the chat window's requests on the link.
	talk := &boardv1.TalkRequest{Agent: "refund-desk", Thread: "thread-19", Text: "Refund order A-1043, it arrived broken."}
	talkInput := &boardv1.TalkRequest{Agent: "refund-desk", Input: fireInput()}
	talkAnswer := &boardv1.TalkRequest{Agent: "refund-desk", Thread: "thread-19", Answer: structpb.NewStringValue("yes")}
	add("ChatService.Talk.request", talk)
	add("ChatService.Talk.request.input", talkInput)
	add("ChatService.Talk.request.answer", talkAnswer)
	replied := &boardv1.ChatTurn{Thread: "thread-19", RunId: runID, Reply: "Refunded 740.50 EUR."}
	waiting := &boardv1.ChatTurn{Thread: "thread-19", RunId: runID, Pending: chatPending()}
	asking := &boardv1.ChatTurn{Thread: "thread-20", RunId: runID, Pending: &boardv1.ChatPending{
		Kind: boardv1.PauseKind_PAUSE_KIND_ASK, Node: "clarify", Question: "Which order?",
	}}
	add("ChatService.Talk.response", &boardv1.TalkResponse{Turn: replied})
	add("ChatService.Talk.response.approval", &boardv1.TalkResponse{Turn: waiting})
	add("ChatService.Talk.response.ask", &boardv1.TalkResponse{Turn: asking})
	page := &boardv1.GetChatPageResponse{Name: "refund-desk", Description: "Refunds orders under 500 EUR and asks above.",
		Inputs: flowInputs(), Outputs: []*boardv1.FlowInput{{Name: "reply", Type: "string", Description: "What the agent says."}},
		Paused: "The payments provider is down."}
	add("ChatService.GetChatPage.request", &boardv1.GetChatPageRequest{Agent: "refund-desk"})
	add("ChatService.GetChatPage.response", page)
	described := &boardv1.DescribeAgentResponse{Name: "refund-desk", Description: "Refunds orders under 500 EUR and asks above.",
		Build: build, Inputs: flowInputs(), Outputs: page.Outputs, Tools: []string{"orders.lookup", "orders.refund"},
		Needs: []string{"MCP server orders (node examples/orders/server.js)", "OPENAI_API_KEY", "a model: gpt-4o-mini"}, Conversation: true}
	add("ChatService.DescribeAgent.request", &boardv1.DescribeAgentRequest{Agent: "refund-desk"})
	add("ChatService.DescribeAgent.response", described)
	threads := &boardv1.ListThreadsResponse{Threads: []*boardv1.ChatThread{
		{Thread: "thread-19", UpdateTime: at(5), Turns: 3, Waiting: true}, {Thread: "thread-7", UpdateTime: at(-90), Turns: 12},
	}}
	add("ChatService.ListThreads.request", &boardv1.ListThreadsRequest{Agent: "refund-desk"})
	add("ChatService.ListThreads.response", threads)
	thread := &boardv1.GetThreadResponse{Thread: "thread-19", Pending: chatPending(), Turns: []*boardv1.ChatTurnRecord{
		{Time: at(-2), Asked: "Where is order A-1043?", Answered: "It was delivered on Monday.", Who: "ana@example.com"},
		{Time: at(0), Asked: `{"order":"A-1043","amount":740.5}`, Answered: "I will ask for approval."},
	}}
	add("ChatService.GetThread.request", &boardv1.GetThreadRequest{Agent: "refund-desk", Thread: "thread-19"})
	add("ChatService.GetThread.response", thread)
	chat := func(kind string, m *boardv1.ChatRequest) {
		m.RequestId, m.Who = "q9", "ana@example.com"
		resp("chat."+kind, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Chat{Chat: m}})
	}
	chat("talk", &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Talk{Talk: &boardv1.TalkRequest{Thread: "thread-19", Text: talk.Text}}})
	chat("chat_page", &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_ChatPage{ChatPage: &boardv1.GetChatPageRequest{}}})
	chat("describe", &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Describe{Describe: &boardv1.DescribeAgentRequest{}}})
	chat("conversations", &boardv1.ChatRequest{All: true, Kind: &boardv1.ChatRequest_Conversations{Conversations: &boardv1.ListThreadsRequest{}}})
	chat("conversation", &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Conversation{Conversation: &boardv1.GetThreadRequest{Thread: "thread-19"}}})
	answer := func(kind string, m *boardv1.ChatAnswer) {
		m.RequestId = "q9"
		req("chat_answer."+kind, &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_ChatAnswer{ChatAnswer: m}})
	}
	req("error", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{
		RequestId: "q7", Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT, Message: "input.amount: not a number",
	}}})
	answer("talk", &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Talk{Talk: &boardv1.TalkResponse{Turn: replied}}})
	answer("chat_page", &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_ChatPage{ChatPage: page}})
	answer("describe", &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Describe{Describe: described}})
	answer("conversations", &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversations{Conversations: threads}})
	answer("conversation", &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversation{Conversation: thread}})

	// The bodies of the plain HTTP endpoints under /auth/.
	add("auth.signin.request", &boardv1.SignInRequest{Email: "Ana@Example.com", Password: "correct horse battery"})
	add("auth.setup.request", &boardv1.SetupRequest{Token: "c2V0dXAtdG9rZW4", Email: "ben@example.com", Name: "Ben Ode", Password: "correct horse battery"})
	add("auth.setup.response", user("ben@example.com", boardv1.Role_ROLE_APPROVER))
	add("auth.session", &boardv1.Session{
		Email: "ana@example.com", Name: "Ana Lima", Role: boardv1.Role_ROLE_ADMIN, CsrfToken: "Y3NyZi10b2tlbg", ExpireTime: at(720),
	})
	add("auth.error", &boardv1.AuthError{Error: "email: required"})

	// PackageService.
	add("PackageService.Publish.request.header", &boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: []byte(`{"payload":"eyJkaWdlc3QiOiJzaGEyNTY6NmQxZiJ9","payloadType":"application/vnd.symphonix.package+json","signatures":[]}`),
		Size:     52_428_800,
	}}})
	add("PackageService.Publish.request.chunk", &boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: []byte{0x1f, 0x8b, 0x08, 0x00}}})
	add("PackageService.Publish.response", &boardv1.PublishResponse{Version: packageVersion("1.2.0"), Created: true})
	add("PackageService.ListPackages.request", &boardv1.ListPackagesRequest{PageSize: 50, PageToken: "cGtnLTI", Scope: "acme"})
	add("PackageService.ListPackages.response", &boardv1.ListPackagesResponse{
		Packages:      []*boardv1.PackageSummary{packageSummary()},
		NextPageToken: "cGtnLTM",
	})
	add("PackageService.GetPackage.request", &boardv1.GetPackageRequest{Name: "acme/refund-desk", PageSize: 20, PageToken: "dmVyLTI"})
	yanked := packageVersion("1.1.0")
	yanked.Digest = digestB
	yanked.Yanked = &boardv1.Yanked{By: "ada@example.com", Time: at(30), Reason: "Refunds twice on a retry."}
	add("PackageService.GetPackage.response", &boardv1.GetPackageResponse{
		Package:       packageSummary(),
		Versions:      []*boardv1.PackageVersion{packageVersion("1.2.0"), yanked},
		NextPageToken: "dmVyLTM",
	})
	add("PackageService.Download.request", &boardv1.DownloadRequest{Name: "acme/refund-desk", Version: "1.2.0", Digest: digestA})
	add("PackageService.Download.response.head", &boardv1.DownloadResponse{Part: &boardv1.DownloadResponse_Head{Head: &boardv1.DownloadHead{
		Version:  packageVersion("1.2.0"),
		Envelope: []byte(`{"payload":"e30","payloadType":"application/vnd.symphonix.package+json","signatures":[]}`),
		Trust:    &boardv1.Trust{Scope: "acme", Threshold: 2, Keys: []*boardv1.PublisherKey{publisherKey(false)}},
	}}})
	add("PackageService.Download.response.chunk", &boardv1.DownloadResponse{Part: &boardv1.DownloadResponse_Chunk{Chunk: []byte{0x1f, 0x8b, 0x08, 0x00}}})
	add("PackageService.Yank.request", &boardv1.YankRequest{Name: "acme/refund-desk", Version: "1.1.0", Reason: "Refunds twice on a retry."})
	add("PackageService.Yank.response", &boardv1.YankResponse{Version: yanked})
	add("PackageService.AddKey.request", &boardv1.AddKeyRequest{PublicKey: publisherKey(false).PublicKey, Publisher: "acme-release"})
	add("PackageService.AddKey.response", &boardv1.AddKeyResponse{Key: publisherKey(false), Created: true})
	add("PackageService.ListKeys.request", &boardv1.ListKeysRequest{PageSize: 10, PageToken: "a2V5LTI", Publisher: "acme-release"})
	add("PackageService.ListKeys.response", &boardv1.ListKeysResponse{Keys: []*boardv1.PublisherKey{publisherKey(false), publisherKey(true)}, NextPageToken: "a2V5LTM"})
	add("PackageService.RevokeKey.request", &boardv1.RevokeKeyRequest{KeyId: publisherKey(true).KeyId, Reason: "The laptop holding it was stolen."})
	add("PackageService.RevokeKey.response", &boardv1.RevokeKeyResponse{Key: publisherKey(true)})
	add("PackageService.PutScope.request", &boardv1.PutScopeRequest{Name: "acme", Publishers: []string{"acme-release", "acme-security"}, Threshold: 2})
	add("PackageService.PutScope.response", &boardv1.PutScopeResponse{Scope: packageScope()})
	add("PackageService.ListScopes.request", &boardv1.ListScopesRequest{PageSize: 10, PageToken: "c2NvcGUtMg"})
	add("PackageService.ListScopes.response", &boardv1.ListScopesResponse{Scopes: []*boardv1.Scope{packageScope()}, NextPageToken: "c2NvcGUtMw"})
	withPackage := agent("refund-desk", boardv1.AgentState_AGENT_STATE_ONLINE)
	withPackage.Package = installed()
	add("AgentService.GetAgent.response.package", &boardv1.GetAgentResponse{Agent: withPackage})

	// TriggerService, and triggers on the link and on runs.
	add("TriggerService.ListTriggers.request", &boardv1.ListTriggersRequest{Agent: "refund-desk", PageSize: 50, PageToken: "dHJpZy0y"})
	add("TriggerService.ListTriggers.response", &boardv1.ListTriggersResponse{
		Triggers:      []*boardv1.AgentTrigger{agentTrigger(scheduleTrigger(), true), agentTrigger(webhookTrigger(), false)},
		NextPageToken: "dHJpZy0z",
	})
	add("TriggerService.PauseTrigger.request", &boardv1.PauseTriggerRequest{Agent: "refund-desk", TriggerId: "nightly-report", Reason: "Month-end freeze."})
	add("TriggerService.PauseTrigger.response", &boardv1.PauseTriggerResponse{Trigger: agentTrigger(scheduleTrigger(), true), Pushed: true})
	add("TriggerService.ResumeTrigger.request", &boardv1.ResumeTriggerRequest{Agent: "refund-desk", TriggerId: "nightly-report"})
	resumed := agentTrigger(scheduleTrigger(), false)
	resumed.Trigger.Last.Delivery = boardv1.DeliveryState_DELIVERY_STATE_PENDING
	add("TriggerService.ResumeTrigger.response", &boardv1.ResumeTriggerResponse{Trigger: resumed, Pushed: false})
	req("triggers", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Triggers{Triggers: &boardv1.TriggerReport{
		Triggers: []*boardv1.Trigger{scheduleTrigger(), webhookTrigger()},
	}}})
	resp("trigger_pauses", &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_TriggerPauses{TriggerPauses: &boardv1.TriggerPauses{
		Paused: []string{"nightly-report"},
	}}})
	req("run_event.start.trigger", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: &boardv1.RunEvent{
		RunId: "run-trig-1", Seq: 1, Time: at(60),
		Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{StartedBy: "trigger", Build: build, Trigger: runTrigger()}},
	}}})
	triggered := runOf(false)
	triggered.StartedBy, triggered.StartedByWho, triggered.Trigger = "trigger", "", runTrigger()
	add("RunService.GetRun.response.trigger", &boardv1.GetRunResponse{Run: triggered})

	// EvalService, and eval scores on the link.
	req("evals", &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Evals{Evals: &boardv1.EvalReport{
		Suites: []*boardv1.EvalSuiteScores{{Suite: "refund-desk.eval.json", Builds: []*boardv1.EvalScore{evalScore(build, 0.62, 70), evalScore(earlierBuild, 0.81, 10)}}},
	}}})
	add("EvalService.ListEvalScores.request", &boardv1.ListEvalScoresRequest{Agent: "refund-desk", PageSize: 50, PageToken: "ZXZhbC0y"})
	add("EvalService.ListEvalScores.response", &boardv1.ListEvalScoresResponse{Suites: []*boardv1.AgentEvalSuite{agentEvalSuite()}, NextPageToken: "ZXZhbC0z"})
	published := evalScore(laterBuild, 0.9, 90)
	published.Times = 0
	add("EvalService.PublishEvalScores.request", &boardv1.PublishEvalScoresRequest{Suite: "refund-desk.eval.json", Score: published})
	after := agentEvalSuite()
	published = evalScore(laterBuild, 0.9, 90)
	published.Source = boardv1.EvalSource_EVAL_SOURCE_PUBLISHED
	after.Builds = append([]*boardv1.EvalScore{published}, after.Builds...)
	add("EvalService.PublishEvalScores.response", &boardv1.PublishEvalScoresResponse{Suite: after})
	notScored := agentEvalSuite()
	notScored.Builds = notScored.Builds[1:]
	notScored.Flags = []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_NOT_SCORED}
	notScored.Reasons = []string{"the deployed build a3c2e1f0d9b8 has no score in this suite"}
	add("EvalService.ListEvalScores.response.not_scored", &boardv1.ListEvalScoresResponse{Suites: []*boardv1.AgentEvalSuite{notScored}})
	return out
}

// Two more builds of the agent's flow, for eval scores.
const (
	earlierBuild = "sha256:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809"
	laterBuild   = "sha256:9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

func evalScore(build string, score float64, minutes int) *boardv1.EvalScore {
	threshold := 0.8
	return &boardv1.EvalScore{
		Build: build, ScoreTime: at(minutes), Score: score, Passed: score >= threshold,
		Cases: 4, Completed: 4, Scored: 4, Times: 1,
		Criteria:  map[string]float64{"grounded": score, "polite": 1},
		Threshold: &threshold,
	}
}

func agentEvalSuite() *boardv1.AgentEvalSuite {
	deployed := evalScore(build, 0.62, 70)
	deployed.Source, deployed.Deployed, deployed.Times = boardv1.EvalSource_EVAL_SOURCE_REPORTED, true, 2
	earlier := evalScore(earlierBuild, 0.81, 10)
	earlier.Source = boardv1.EvalSource_EVAL_SOURCE_REPORTED
	return &boardv1.AgentEvalSuite{
		Agent: "refund-desk", Suite: "refund-desk.eval.json", DeployedBuild: build,
		Builds: []*boardv1.EvalScore{deployed, earlier},
		Flags:  []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_REGRESSED, boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD},
		Reasons: []string{
			"the deployed build a3c2e1f0d9b8 scored 0.62, below the 0.81 of 1a2b3c4d5e6f scored 2026-12-01",
			"the deployed build a3c2e1f0d9b8 scored 0.62, below the suite's threshold of 0.80",
		},
	}
}

// runID is the run the run cases are about.
const runID = "7f3a9c2e5b1d4f60a8e2c4b6d8f0a1c3"

func flowInputs() []*boardv1.FlowInput {
	return []*boardv1.FlowInput{
		{Name: "order", Type: "string", Description: "The order to refund."},
		{Name: "amount", Type: "number", Description: "How much, in EUR."},
	}
}

func fireInput() *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{"order": "A-1043", "amount": 740.5})
	if err != nil {
		panic(err)
	}
	return s
}

func runSteps() []*boardv1.RunStep {
	return []*boardv1.RunStep{
		{Seq: 1, Node: "lookup", Kind: "tool", Copy: -1, StartTime: at(0), Duration: durationpb.New(420 * time.Millisecond),
			Outcome: boardv1.StepOutcome_STEP_OUTCOME_OK},
		{Seq: 2, Node: "decide", Kind: "llm", Copy: -1, StartTime: at(1), Duration: durationpb.New(2 * time.Second),
			Outcome: boardv1.StepOutcome_STEP_OUTCOME_OK, Tokens: &boardv1.Tokens{Input: 812, Output: 64, Cached: 512, Total: 876}},
		{Seq: 3, Node: "approve_refund", Kind: "handler", Copy: -1, StartTime: at(2), Duration: durationpb.New(time.Millisecond),
			Outcome: boardv1.StepOutcome_STEP_OUTCOME_PAUSED, Pause: boardv1.PauseKind_PAUSE_KIND_APPROVAL, ApprovalId: "ap_pending"},
		{Seq: 4, Node: "refund", Kind: "tool", Copy: 0, StartTime: at(30), Duration: durationpb.New(5 * time.Second),
			Outcome: boardv1.StepOutcome_STEP_OUTCOME_FAILED, Error: "orders.refund: the payments provider answered 503"},
		{Seq: 5, Node: "notify", Kind: "tool", Copy: 1, StartTime: at(30), Duration: durationpb.New(time.Second),
			Outcome: boardv1.StepOutcome_STEP_OUTCOME_STOPPED},
	}
}

// runOf is a failed run with its steps: with its values (full detail), or
// with them withheld.
// runDelegation is how billing's run was delegated to by refund-desk's.
func runDelegation() *boardv1.RunDelegation {
	return &boardv1.RunDelegation{ParentRunId: runID, ParentNode: "ask_billing", InvocationId: "inv-3", Agent: "billing",
		Chain: []string{"refund-desk", "billing"}}
}

func runOf(full bool) *boardv1.Run {
	r := &boardv1.Run{
		Id: runID, Agent: "refund-desk", Thread: "thread-19", StartedBy: "chat", StartedByWho: "ana@example.com",
		Build: build, State: boardv1.RunState_RUN_STATE_FAILED, StartTime: at(0), EndTime: at(31),
		Duration: durationpb.New(8*time.Second + 421*time.Millisecond), StepCount: 5,
		Tokens: &boardv1.Tokens{Input: 812, Output: 64, Cached: 512, Total: 876},
		Error:  "node refund: orders.refund: the payments provider answered 503",
		Steps:  runSteps(), StepsTruncated: true,
	}
	if full {
		r.Agent = ""
		r.Input = fireInput()
		r.Output, _ = structpb.NewStruct(map[string]any{"reply": "Refunded."})
	} else {
		r.Withheld = []string{"input", "output"}
	}
	return r
}

// chatPending is an approval the board decides, waited on in the chat.
func chatPending() *boardv1.ChatPending {
	return &boardv1.ChatPending{Kind: boardv1.PauseKind_PAUSE_KIND_APPROVAL, Node: "approve_refund",
		Question: "Refund 740.50 EUR for order A-1043?", ShowJson: showJSON, Decides: "board", ApprovalId: "ap_pending"}
}

// pausedRun is a run waiting on an approval.
func pausedRun() *boardv1.Run {
	r := runOf(false)
	r.State, r.EndTime, r.Error, r.Pause, r.PausedAt, r.ApprovalId = boardv1.RunState_RUN_STATE_PAUSED, nil, "",
		boardv1.PauseKind_PAUSE_KIND_APPROVAL, "approve_refund", "ap_pending"
	return r
}

// authMessages are the messages of the plain HTTP endpoints under /auth/,
// which no RPC names.
var authMessages = []proto.Message{
	&boardv1.SignInRequest{}, &boardv1.SetupRequest{}, &boardv1.Session{}, &boardv1.AuthError{}, &boardv1.User{},
}

func installed() *boardv1.InstalledPackage {
	return &boardv1.InstalledPackage{Name: "acme/refund-desk", Version: "1.2.0", Digest: digestA}
}

func packageVersion(v string) *boardv1.PackageVersion {
	return &boardv1.PackageVersion{
		Name:        "acme/refund-desk",
		Version:     v,
		Digest:      digestA,
		Kind:        "agent",
		Description: "Refunds orders under 500 EUR and asks above.",
		Size:        48_213,
		Files:       7,
		Signers:     []string{publisherKey(false).KeyId},
		PublishedBy: "ada@example.com",
		PublishTime: at(-120),
		Agents:      []string{"refund-desk", "refund-desk-eu"},
		AgentCount:  2,
		Requires: &boardv1.PackageRequires{
			McpServers: []string{"orders"},
			Inputs:     []string{"order_id"},
			Secrets:    []string{"ORDERS_API_KEY"},
		},
	}
}

func packageSummary() *boardv1.PackageSummary {
	return &boardv1.PackageSummary{
		Name: "acme/refund-desk", Kind: "agent", Description: "Refunds orders under 500 EUR and asks above.",
		Latest: "1.2.0", Versions: 3, UpdateTime: at(-120),
	}
}

func publisherKey(revoked bool) *boardv1.PublisherKey {
	k := &boardv1.PublisherKey{
		KeyId:     "sha256:9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
		PublicKey: "ed25519:qL8yS7bF8c9mZ2xW4vT1nR6pK3jH5gD0aQeUoIyTrEw=",
		Publisher: "acme-release",
		AddedBy:   "ada@example.com",
		AddTime:   at(-2880),
	}
	if revoked {
		k.KeyId = "sha256:1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c"
		k.PublicKey = "ed25519:Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGw="
		k.Revoked = &boardv1.Revoked{By: "ada@example.com", Time: at(-60), Reason: "The laptop holding it was stolen."}
	}
	return k
}

func packageScope() *boardv1.Scope {
	return &boardv1.Scope{Name: "acme", Publishers: []string{"acme-release", "acme-security"}, Threshold: 2, SetBy: "ada@example.com", SetTime: at(-1000)}
}

func scheduleTrigger() *boardv1.Trigger {
	return &boardv1.Trigger{
		Id: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE,
		Schedule: "30 9 * * 1-5", TimeZone: "Europe/Paris", Description: "Every weekday at 09:30",
		NextRunTime: at(1440), Overlap: "skip", Delivers: true,
		Last: &boardv1.TriggerOccurrence{
			Time: at(-60), RunId: "run-trig-0", Ok: true, Duration: durationpb.New(42 * time.Second),
			Delivery: boardv1.DeliveryState_DELIVERY_STATE_DELIVERED,
		},
	}
}

func webhookTrigger() *boardv1.Trigger {
	return &boardv1.Trigger{
		Id: "order-created", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK,
		Method: "POST", Path: "/hooks/order-created", Overlap: "queue", Signed: true,
		Last: &boardv1.TriggerOccurrence{
			Time: at(-5), Error: "a run of this trigger was still going: skipped",
			Delivery: boardv1.DeliveryState_DELIVERY_STATE_NONE,
		},
	}
}

func agentTrigger(tr *boardv1.Trigger, paused bool) *boardv1.AgentTrigger {
	a := &boardv1.AgentTrigger{Agent: "refund-desk", Trigger: tr, ReportTime: at(2), Online: true}
	if paused {
		a.Pause = &boardv1.TriggerPause{Paused: true, Reason: "Month-end freeze.", By: "ada@example.com", Time: at(1)}
	}
	return a
}

func runTrigger() *boardv1.RunTrigger {
	return &boardv1.RunTrigger{
		TriggerId: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, OccurrenceTime: at(60),
		Delivery: boardv1.DeliveryState_DELIVERY_STATE_FAILED, DeliveryAttempts: 5,
	}
}
