package board_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// withUnknown is m carrying raw as fields it does not know, sent as they
// are: what a client built on another version of the API sends.
func withUnknown[M proto.Message](m M, raw []byte) M {
	m.ProtoReflect().SetUnknown(raw)
	return m
}

// oldString is field num as a string: how an API before v1 sent the
// fields that are enums now.
func oldString(num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
}

// TestStrictBinary: over binary protobuf (Connect and gRPC), a request
// holding a field the board does not know — an old client's word where the
// field is now an enum, a field removed or reserved, a number never used —
// is invalid_argument naming it, and nothing is done.
func TestStrictBinary(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	root := bt.OperatorToken("root", identity.RoleAdmin)
	oldRule := append(oldString(2, "*"), oldString(3, "*")...)
	oldRule = append(oldRule, oldString(4, "approver")...)
	for proto_, opts := range boardtest.Protocols {
		approvals := approvalsClient(bt, root, opts...)
		users := bt.Users(root, opts...)
		audit := boardv1connect.NewAuditServiceClient(bt.Client(root, opts...))
		ctx := t.Context()
		tests := []struct {
			name string
			call func() error
			want string
		}{
			{"ListApprovals with the state as a word", func() error {
				_, err := approvals.ListApprovals(ctx, withUnknown(&boardv1.ListApprovalsRequest{}, oldString(1, "pending")))
				return err
			}, "state: wrong type (this field is an ApprovalState since API v1)"},
			{"AddUser with the role as a word", func() error {
				_, err := users.AddUser(ctx, withUnknown(&boardv1.AddUserRequest{Email: "bob@example.com"}, oldString(3, "approver")))
				return err
			}, "role: wrong type (this field is a Role since API v1)"},
			{"SetIdentify with the door as a word", func() error {
				_, err := users.SetIdentify(ctx, withUnknown(&boardv1.SetIdentifyRequest{}, oldString(1, "verify")))
				return err
			}, "door: wrong type (this field is a Door since API v1)"},
			{"PutRule with the rule's role as a word", func() error {
				_, err := approvals.PutRule(ctx, &boardv1.PutRuleRequest{Rule: withUnknown(&boardv1.Rule{}, oldRule)})
				return err
			}, "rule.role: wrong type (this field is a Role since API v1)"},
			{"DisableUser by email, as before v1", func() error {
				raw := append(oldString(1, "bob@example.com"), protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1)...)
				_, err := users.DisableUser(ctx, withUnknown(&boardv1.DisableUserRequest{}, raw))
				return err
			}, "DisableUserRequest: unknown field 1: this board does not know it"},
			{"ListAudit with a field never used", func() error {
				_, err := audit.ListAudit(ctx, withUnknown(&boardv1.ListAuditRequest{}, protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 5)))
				return err
			}, "ListAuditRequest: unknown field 99: this board does not know it"},
			{"ListRules with the page size as a word", func() error {
				_, err := approvals.ListRules(ctx, withUnknown(&boardv1.ListRulesRequest{}, oldString(1, "ten")))
				return err
			}, "page_size: wrong type (this field is an int32)"},
			{"Decide with a say no value has", func() error {
				_, err := approvals.Decide(ctx, &boardv1.DecideRequest{Id: "apr-1", Say: 42, Digest: digestOf(1)})
				return err
			}, "say: unknown value 42"},
		}
		for _, tt := range tests {
			var ce *connect.Error
			if err := tt.call(); !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || ce.Message() != tt.want {
				t.Errorf("%s: %s = %v, want invalid_argument %q", proto_, tt.name, err, tt.want)
			}
		}
	}
	// Nothing was done: no person added, no rule put, the door as it was.
	if list, err := bt.Users(root).ListUsers(t.Context(), &boardv1.ListUsersRequest{}); err != nil || len(list.GetUsers()) != 0 {
		t.Errorf("ListUsers = %v, %v; want nobody", list, err)
	}
	if rules := listRules(t, approvalsClient(bt, root)); len(rules) != 0 {
		t.Errorf("ListRules = %v, want none", rules)
	}
	if got, err := bt.Users(root).GetIdentify(t.Context(), &boardv1.GetIdentifyRequest{}); err != nil || got.GetDoor() != boardv1.Door_DOOR_PAIRING {
		t.Errorf("GetIdentify = %v, %v; want pairing, as it was", got, err)
	}
}

// postJSON posts body as JSON to procedure over the Connect protocol and
// returns the status and, for an error, its code and message.
func postJSON(t *testing.T, bt *boardtest.Board, token, procedure, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, bt.URL+procedure, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, data := bt.Do(req)
	var e struct{ Code, Message string }
	if res.StatusCode != http.StatusOK {
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s: %d %s: not a Connect error", procedure, res.StatusCode, data)
		}
	}
	return res.StatusCode, e.Code, e.Message
}

// TestStrictJSON: over JSON, a field the board does not know, or a word
// that is not one of the field's enum values, is invalid_argument naming
// it: {"state":"pending"} is never read as every state.
func TestStrictJSON(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	root := bt.OperatorToken("root", identity.RoleAdmin)
	tests := []struct {
		name, procedure, body, want string
	}{
		{"the state as a word", boardv1connect.ApprovalServiceListApprovalsProcedure, `{"state": "pending"}`,
			`state: wrong value "pending" (this field is an ApprovalState since API v1)`},
		{"a state no value has", boardv1connect.ApprovalServiceListApprovalsProcedure, `{"state": 42}`, "state: unknown value 42"},
		{"the rule's role as a word", boardv1connect.ApprovalServicePutRuleProcedure, `{"rule": {"agent": "*", "node": "*", "role": "approver"}}`,
			`rule.role: wrong value "approver" (this field is a Role since API v1)`},
		{"a field removed in v1", boardv1connect.ApprovalServiceListRulesProcedure, `{"truncated": true}`,
			`ListRulesRequest: unknown field "truncated": this board does not know it`},
		{"DisableUser by email", boardv1connect.UserServiceDisableUserProcedure, `{"email": "bob@example.com", "disabled": true}`,
			`DisableUserRequest: unknown field "disabled": this board does not know it`},
		{"ListAudit's old names", boardv1connect.AuditServiceListAuditProcedure, `{"after": 5, "limit": 10}`,
			`ListAuditRequest: unknown field "after": this board does not know it`},
		{"the say as a word", boardv1connect.ApprovalServiceDecideProcedure, `{"id": "apr-1", "say": "yes"}`,
			`say: wrong value "yes" (this field is a Say since API v1)`},
		{"a field unknown inside a message", boardv1connect.ApprovalServicePutRuleProcedure, `{"rule": {"agent": "*", "node": "*", "who": ["ann"]}}`,
			`Rule: unknown field "who": this board does not know it`},
	}
	for _, tt := range tests {
		status, code, msg := postJSON(t, bt, root, tt.procedure, tt.body)
		if status != http.StatusBadRequest || code != "invalid_argument" || msg != tt.want {
			t.Errorf("%s: %d %s %q, want 400 invalid_argument %q", tt.name, status, code, msg, tt.want)
		}
	}
	// The same requests in v1's words are answered; proto names are JSON too.
	for _, body := range []string{`{"state": "APPROVAL_STATE_PENDING"}`, `{"state": 1, "page_size": 5}`, `{"pageSize": 5}`} {
		if status, code, msg := postJSON(t, bt, root, boardv1connect.ApprovalServiceListApprovalsProcedure, body); status != http.StatusOK {
			t.Errorf("ListApprovals %s = %d %s %q, want 200", body, status, code, msg)
		}
	}
	if rules := listRules(t, approvalsClient(bt, root)); len(rules) != 0 {
		t.Errorf("ListRules = %v, want none: no refused rule was put", rules)
	}
}

// TestLinkIgnoresUnknown: the link is not strict. A kind, or a field, the
// board does not know is ignored, and the link stays up, so that a newer
// agent can talk to an older board.
func TestLinkIgnoresUnknown(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	newer := oldString(99, "a kind from a later protocol")
	l.send(withUnknown(&boardv1.LinkRequest{}, newer))
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: withUnknown(&boardv1.Ping{Seq: 7}, newer)}})
	if m := l.next(); m.GetPong().GetSeq() != 7 {
		t.Fatalf("after an unknown kind, ping 7 = %v, want its pong", m)
	}
}
