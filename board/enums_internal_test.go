package board

import (
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/reflect/protoreflect"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
)

// values is every value of the enum e but the unspecified one.
func values[E ~int32](e E, of func(protoreflect.EnumNumber) E) []E {
	var out []E
	vs := any(e).(protoreflect.Enum).Descriptor().Values()
	for i := range vs.Len() {
		if n := vs.Get(i).Number(); n != 0 {
			out = append(out, of(n))
		}
	}
	return out
}

// wantInvalid wants err to be an invalid_argument whose message is msg.
func wantInvalid(t *testing.T, what string, err error, msg string) {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || ce.Message() != msg {
		t.Errorf("%s = %v, want invalid_argument %q", what, err, msg)
	}
}

func TestRoleEnum(t *testing.T) {
	for _, r := range []identity.Role{identity.RoleViewer, identity.RoleApprover, identity.RoleAdmin} {
		if got, err := roleFrom("role", roleProto(r), true); err != nil || got != r {
			t.Errorf("roleFrom(roleProto(%s)) = %s, %v", r, got, err)
		}
		if got := storedRoleProto(r.String()); got != roleProto(r) {
			t.Errorf("storedRoleProto(%q) = %s, want %s", r, got, roleProto(r))
		}
	}
	for _, v := range values(boardv1.Role(0), func(n protoreflect.EnumNumber) boardv1.Role { return boardv1.Role(n) }) {
		r, err := roleFrom("role", v, true)
		if err != nil || roleProto(r) != v {
			t.Errorf("roleProto(roleFrom(%s)) = %s, %v", v, roleProto(r), err)
		}
	}
	if got := roleProto(identity.RoleNone); got != boardv1.Role_ROLE_UNSPECIFIED {
		t.Errorf("roleProto(none) = %s, want unspecified", got)
	}
	if got := storedRoleProto(""); got != boardv1.Role_ROLE_UNSPECIFIED {
		t.Errorf(`storedRoleProto("") = %s, want unspecified`, got)
	}
	if r, err := roleFrom("rule.role", boardv1.Role_ROLE_UNSPECIFIED, false); err != nil || r != identity.RoleNone {
		t.Errorf("roleFrom(unspecified, not required) = %s, %v; want none", r, err)
	}
	_, err := roleFrom("role", boardv1.Role_ROLE_UNSPECIFIED, true)
	wantInvalid(t, "roleFrom(unspecified)", err, "role: required")
	_, err = roleFrom("role", 42, false)
	wantInvalid(t, "roleFrom(42)", err, "role: unknown value 42")
}

func TestDoorEnum(t *testing.T) {
	for _, d := range []string{DoorPairing, DoorVerify, DoorNone} {
		if got, err := doorFrom("door", doorProto(d)); err != nil || got != d {
			t.Errorf("doorFrom(doorProto(%q)) = %q, %v", d, got, err)
		}
	}
	for _, v := range values(boardv1.Door(0), func(n protoreflect.EnumNumber) boardv1.Door { return boardv1.Door(n) }) {
		d, err := doorFrom("door", v)
		if err != nil || doorProto(d) != v {
			t.Errorf("doorProto(doorFrom(%s)) = %s, %v", v, doorProto(d), err)
		}
	}
	if got := doorProto("open"); got != boardv1.Door_DOOR_UNSPECIFIED {
		t.Errorf(`doorProto("open") = %s, want unspecified`, got)
	}
	_, err := doorFrom("door", boardv1.Door_DOOR_UNSPECIFIED)
	wantInvalid(t, "doorFrom(unspecified)", err, "door: required")
	_, err = doorFrom("door", 42)
	wantInvalid(t, "doorFrom(42)", err, "door: unknown value 42")
}

func TestApprovalStateEnum(t *testing.T) {
	states := []string{StatePending, StateApproved, StateRejected, StateCancelled, StateExpired, StateSuperseded}
	for _, s := range states {
		if got, err := approvalStateFrom("state", approvalStateProto(s)); err != nil || got != s {
			t.Errorf("approvalStateFrom(approvalStateProto(%q)) = %q, %v", s, got, err)
		}
	}
	vs := values(boardv1.ApprovalState(0), func(n protoreflect.EnumNumber) boardv1.ApprovalState { return boardv1.ApprovalState(n) })
	if len(vs) != len(states) {
		t.Errorf("%d states in the API, %d on the board", len(vs), len(states))
	}
	for _, v := range vs {
		s, err := approvalStateFrom("state", v)
		if err != nil || approvalStateProto(s) != v {
			t.Errorf("approvalStateProto(approvalStateFrom(%s)) = %s, %v", v, approvalStateProto(s), err)
		}
	}
	if s, err := approvalStateFrom("state", boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED); err != nil || s != "" {
		t.Errorf("approvalStateFrom(unspecified) = %q, %v; want every state", s, err)
	}
	if got := approvalStateProto(""); got != boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED {
		t.Errorf(`approvalStateProto("") = %s`, got)
	}
	_, err := approvalStateFrom("state", 42)
	wantInvalid(t, "approvalStateFrom(42)", err, "state: unknown value 42")
}

func TestSayEnum(t *testing.T) {
	for _, s := range []string{sayYes, sayNo} {
		if got, err := sayFrom("say", sayProto(s)); err != nil || got != s {
			t.Errorf("sayFrom(sayProto(%q)) = %q, %v", s, got, err)
		}
	}
	for s, want := range map[string]boardv1.Say{sayCancelled: boardv1.Say_SAY_CANCELLED, sayExpired: boardv1.Say_SAY_EXPIRED, "": boardv1.Say_SAY_UNSPECIFIED} {
		if got := sayProto(s); got != want {
			t.Errorf("sayProto(%q) = %s, want %s", s, got, want)
		}
	}
	for _, v := range values(boardv1.Say(0), func(n protoreflect.EnumNumber) boardv1.Say { return boardv1.Say(n) }) {
		s, err := sayFrom("say", v)
		switch v {
		case boardv1.Say_SAY_YES, boardv1.Say_SAY_NO:
			if err != nil || sayProto(s) != v {
				t.Errorf("sayProto(sayFrom(%s)) = %s, %v", v, sayProto(s), err)
			}
		default:
			wantInvalid(t, "sayFrom("+v.String()+")", err, "say: must be SAY_YES or SAY_NO")
		}
	}
	_, err := sayFrom("say", boardv1.Say_SAY_UNSPECIFIED)
	wantInvalid(t, "sayFrom(unspecified)", err, "say: required")
	_, err = sayFrom("say", 42)
	wantInvalid(t, "sayFrom(42)", err, "say: unknown value 42")
}

func TestOutboundEnums(t *testing.T) {
	if agentStateProto(true) != boardv1.AgentState_AGENT_STATE_ONLINE || agentStateProto(false) != boardv1.AgentState_AGENT_STATE_OFFLINE {
		t.Error("agentStateProto: online is not AGENT_STATE_ONLINE, or offline not AGENT_STATE_OFFLINE")
	}
	for r, want := range map[approvals.Ruling]boardv1.Ruling{
		approvals.Governed: boardv1.Ruling_RULING_GOVERNED, approvals.NotGoverned: boardv1.Ruling_RULING_NOT_GOVERNED, "": boardv1.Ruling_RULING_UNSPECIFIED,
	} {
		if got := rulingProto(r); got != want {
			t.Errorf("rulingProto(%q) = %s, want %s", r, got, want)
		}
	}
	for k, want := range map[identity.Kind]boardv1.CallerKind{
		identity.KindSession: boardv1.CallerKind_CALLER_KIND_SESSION, identity.KindOperator: boardv1.CallerKind_CALLER_KIND_OPERATOR,
		identity.KindAgent: boardv1.CallerKind_CALLER_KIND_UNSPECIFIED,
	} {
		if got := callerKindProto(k); got != want {
			t.Errorf("callerKindProto(%s) = %s, want %s", k, got, want)
		}
	}
	for _, v := range values(boardv1.LinkErrorCode(0), func(n protoreflect.EnumNumber) boardv1.LinkErrorCode { return boardv1.LinkErrorCode(n) }) {
		c := connect.Code(v)
		if got := linkErrorCode(c); got != v || !strings.HasSuffix(v.String(), strings.ToUpper(c.String())) {
			t.Errorf("linkErrorCode(%s) = %s, want %s", c, got, v)
		}
	}
	for _, c := range []connect.Code{connect.CodeUnknown, connect.CodePermissionDenied, connect.CodeAborted, 0, 99} {
		if got := linkErrorCode(c); got != boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL {
			t.Errorf("linkErrorCode(%d) = %s, want internal", c, got)
		}
	}
}
