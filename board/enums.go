package board

import (
	"fmt"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/reflect/protoreflect"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
)

// The API's enums and the board's own values meet here, one pair of small
// functions per enum: what the store keeps (a role, a door, a state or a
// say as a word) does not change with the API, and nothing else in the
// board converts between them.

// enumIn checks an enum a request carries in field: a number no value of
// the enum has is refused, and so is the unspecified value when required.
// The error is an invalid_argument naming the field.
func enumIn(field string, v protoreflect.Enum, required bool) error {
	n := v.Number()
	if n == 0 {
		if required {
			return connect.NewError(connect.CodeInvalidArgument, field+": required")
		}
		return nil
	}
	if v.Descriptor().Values().ByNumber(n) == nil {
		return connect.Errorf(connect.CodeInvalidArgument, "%s: unknown value %d", field, n)
	}
	return nil
}

// roleProto is a role as the API says it; RoleNone is unspecified.
func roleProto(r identity.Role) boardv1.Role {
	switch r {
	case identity.RoleViewer:
		return boardv1.Role_ROLE_VIEWER
	case identity.RoleApprover:
		return boardv1.Role_ROLE_APPROVER
	case identity.RoleAdmin:
		return boardv1.Role_ROLE_ADMIN
	}
	return boardv1.Role_ROLE_UNSPECIFIED
}

// roleFrom is the role a request gives in field; unspecified is refused
// when required, and is RoleNone otherwise.
func roleFrom(field string, r boardv1.Role, required bool) (identity.Role, error) {
	if err := enumIn(field, r, required); err != nil {
		return identity.RoleNone, err
	}
	switch r {
	case boardv1.Role_ROLE_VIEWER:
		return identity.RoleViewer, nil
	case boardv1.Role_ROLE_APPROVER:
		return identity.RoleApprover, nil
	case boardv1.Role_ROLE_ADMIN:
		return identity.RoleAdmin, nil
	}
	return identity.RoleNone, nil
}

// storedRoleProto is a role as the store keeps it ("approver", "admin",
// or "" for none) as the API says it.
func storedRoleProto(s string) boardv1.Role {
	r, err := identity.ParseRole(s)
	if err != nil {
		return boardv1.Role_ROLE_UNSPECIFIED
	}
	return roleProto(r)
}

// callerKindProto is what sort of credential a caller presented.
func callerKindProto(k identity.Kind) boardv1.CallerKind {
	switch k {
	case identity.KindSession:
		return boardv1.CallerKind_CALLER_KIND_SESSION
	case identity.KindOperator:
		return boardv1.CallerKind_CALLER_KIND_OPERATOR
	}
	return boardv1.CallerKind_CALLER_KIND_UNSPECIFIED
}

// doorProto is a door as the store keeps it (DoorPairing, DoorVerify,
// DoorNone) as the API says it.
func doorProto(d string) boardv1.Door {
	switch d {
	case DoorPairing:
		return boardv1.Door_DOOR_PAIRING
	case DoorVerify:
		return boardv1.Door_DOOR_VERIFY
	case DoorNone:
		return boardv1.Door_DOOR_NONE
	}
	return boardv1.Door_DOOR_UNSPECIFIED
}

// doorFrom is the door a request gives in field: required.
func doorFrom(field string, d boardv1.Door) (string, error) {
	if err := enumIn(field, d, true); err != nil {
		return "", err
	}
	switch d {
	case boardv1.Door_DOOR_PAIRING:
		return DoorPairing, nil
	case boardv1.Door_DOOR_VERIFY:
		return DoorVerify, nil
	case boardv1.Door_DOOR_NONE:
		return DoorNone, nil
	}
	return "", connect.Errorf(connect.CodeInvalidArgument, "%s: unknown value %d", field, d)
}

// approvalStateProto is an approval's state as the store keeps it
// (StatePending, ...) as the API says it; "" is unspecified.
func approvalStateProto(s string) boardv1.ApprovalState {
	switch s {
	case StatePending:
		return boardv1.ApprovalState_APPROVAL_STATE_PENDING
	case StateApproved:
		return boardv1.ApprovalState_APPROVAL_STATE_APPROVED
	case StateRejected:
		return boardv1.ApprovalState_APPROVAL_STATE_REJECTED
	case StateCancelled:
		return boardv1.ApprovalState_APPROVAL_STATE_CANCELLED
	case StateExpired:
		return boardv1.ApprovalState_APPROVAL_STATE_EXPIRED
	case StateSuperseded:
		return boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED
	}
	return boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED
}

// approvalStateFrom is the state a filter gives in field, as the store
// keeps it; unspecified is "" (every state).
func approvalStateFrom(field string, s boardv1.ApprovalState) (string, error) {
	if err := enumIn(field, s, false); err != nil {
		return "", err
	}
	switch s {
	case boardv1.ApprovalState_APPROVAL_STATE_PENDING:
		return StatePending, nil
	case boardv1.ApprovalState_APPROVAL_STATE_APPROVED:
		return StateApproved, nil
	case boardv1.ApprovalState_APPROVAL_STATE_REJECTED:
		return StateRejected, nil
	case boardv1.ApprovalState_APPROVAL_STATE_CANCELLED:
		return StateCancelled, nil
	case boardv1.ApprovalState_APPROVAL_STATE_EXPIRED:
		return StateExpired, nil
	case boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED:
		return StateSuperseded, nil
	}
	return "", nil
}

// sayProto is a decision's say as the store keeps it (sayYes, sayNo,
// sayCancelled) or as the board pushes an expiry (StateExpired) as the API
// says it; "" is unspecified.
func sayProto(s string) boardv1.Say {
	switch s {
	case sayYes:
		return boardv1.Say_SAY_YES
	case sayNo:
		return boardv1.Say_SAY_NO
	case sayCancelled:
		return boardv1.Say_SAY_CANCELLED
	case sayExpired:
		return boardv1.Say_SAY_EXPIRED
	}
	return boardv1.Say_SAY_UNSPECIFIED
}

// sayFrom is what a DecideRequest says in field, as the store keeps it:
// yes or no, nothing else.
func sayFrom(field string, s boardv1.Say) (string, error) {
	switch s {
	case boardv1.Say_SAY_YES:
		return sayYes, nil
	case boardv1.Say_SAY_NO:
		return sayNo, nil
	}
	if err := enumIn(field, s, true); err != nil {
		return "", err
	}
	return "", connect.NewError(connect.CodeInvalidArgument, field+": must be SAY_YES or SAY_NO")
}

// agentStateProto is whether an agent is linked, as the API says it.
func agentStateProto(online bool) boardv1.AgentState {
	if online {
		return boardv1.AgentState_AGENT_STATE_ONLINE
	}
	return boardv1.AgentState_AGENT_STATE_OFFLINE
}

// rulingProto is a ruling as the API says it; anything but governed or
// not governed is unspecified, which an agent reads as wait.
func rulingProto(r approvals.Ruling) boardv1.Ruling {
	switch r {
	case approvals.Governed:
		return boardv1.Ruling_RULING_GOVERNED
	case approvals.NotGoverned:
		return boardv1.Ruling_RULING_NOT_GOVERNED
	}
	return boardv1.Ruling_RULING_UNSPECIFIED
}

// linkErrorCode is the code of a refused link request: the enum's numbers
// are the connect codes', and a code the enum does not name is sent as
// internal.
func linkErrorCode(c connect.Code) boardv1.LinkErrorCode {
	e := boardv1.LinkErrorCode(c)
	if e == boardv1.LinkErrorCode_LINK_ERROR_CODE_UNSPECIFIED || e.Descriptor().Values().ByNumber(protoreflect.EnumNumber(e)) == nil {
		return boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL
	}
	return e
}

// enumName is v's name in the API, or its number when it has none.
func enumName(v protoreflect.Enum) string {
	if d := v.Descriptor().Values().ByNumber(v.Number()); d != nil {
		return string(d.Name())
	}
	return fmt.Sprint(v.Number())
}

// checkStatusWord is a check's status as the store keeps it: ok, error or
// unknown. Unspecified, and any value this board does not know, is
// unknown: a line nobody can read never passes for ok.
func checkStatusWord(s boardv1.CheckStatus) string {
	switch s {
	case boardv1.CheckStatus_CHECK_STATUS_OK:
		return "ok"
	case boardv1.CheckStatus_CHECK_STATUS_ERROR:
		return "error"
	}
	return "unknown"
}

// checkStatusProto is a stored check status as the API says it.
func checkStatusProto(s string) boardv1.CheckStatus {
	switch s {
	case "ok":
		return boardv1.CheckStatus_CHECK_STATUS_OK
	case "error":
		return boardv1.CheckStatus_CHECK_STATUS_ERROR
	}
	return boardv1.CheckStatus_CHECK_STATUS_UNKNOWN
}

// healthStatusProto is a stored round status (ok, degraded, unknown) as
// the API says it.
func healthStatusProto(s string) boardv1.HealthStatus {
	switch s {
	case "ok":
		return boardv1.HealthStatus_HEALTH_STATUS_OK
	case "degraded":
		return boardv1.HealthStatus_HEALTH_STATUS_DEGRADED
	}
	return boardv1.HealthStatus_HEALTH_STATUS_UNKNOWN
}

// pauseOriginWord is where a pause was decided, as the store keeps it:
// board or local; "" for anything else.
func pauseOriginWord(o boardv1.PauseOrigin) string {
	switch o {
	case boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD:
		return "board"
	case boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL:
		return "local"
	}
	return ""
}

// pauseOriginProto is a stored origin as the API says it.
func pauseOriginProto(s string) boardv1.PauseOrigin {
	switch s {
	case "board":
		return boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD
	case "local":
		return boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL
	}
	return boardv1.PauseOrigin_PAUSE_ORIGIN_UNSPECIFIED
}
