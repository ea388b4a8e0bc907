package agentlink

import (
	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
)

// The link's enums and this package's words meet here, one small function
// per enum, so that the runtime above reads the board's answers in one
// vocabulary whatever the wire says. A value this agent does not know is
// read as the safe one: a say as no, a ruling as wait, a code as internal.

// sayOf is a decision's say: "yes", "no", "cancelled" or "expired";
// anything else is "no".
func sayOf(s boardv1.Say) string {
	switch s {
	case boardv1.Say_SAY_YES:
		return "yes"
	case boardv1.Say_SAY_CANCELLED:
		return "cancelled"
	case boardv1.Say_SAY_EXPIRED:
		return "expired"
	}
	return "no"
}

// stateOf is an approval's state: "pending", "approved", "rejected",
// "cancelled", "expired" or "superseded"; "" when the board gave none, and
// "unknown" for a state this agent does not know.
func stateOf(s boardv1.ApprovalState) string {
	switch s {
	case boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED:
		return ""
	case boardv1.ApprovalState_APPROVAL_STATE_PENDING:
		return "pending"
	case boardv1.ApprovalState_APPROVAL_STATE_APPROVED:
		return "approved"
	case boardv1.ApprovalState_APPROVAL_STATE_REJECTED:
		return "rejected"
	case boardv1.ApprovalState_APPROVAL_STATE_CANCELLED:
		return "cancelled"
	case boardv1.ApprovalState_APPROVAL_STATE_EXPIRED:
		return "expired"
	case boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED:
		return "superseded"
	}
	return "unknown"
}

// doorOf is a door: DoorPairing, DoorVerify or DoorNone; "" for one this
// agent does not know.
func doorOf(d boardv1.Door) string {
	switch d {
	case boardv1.Door_DOOR_PAIRING:
		return DoorPairing
	case boardv1.Door_DOOR_VERIFY:
		return DoorVerify
	case boardv1.Door_DOOR_NONE:
		return DoorNone
	}
	return ""
}

// rulingOf is the board's ruling; anything but governed or not governed
// is "", which approvals.WhatToDo reads as wait.
func rulingOf(r boardv1.Ruling) approvals.Ruling {
	switch r {
	case boardv1.Ruling_RULING_GOVERNED:
		return approvals.Governed
	case boardv1.Ruling_RULING_NOT_GOVERNED:
		return approvals.NotGoverned
	}
	return ""
}

// roleOf is a role: "viewer", "approver" or "admin"; "" for none.
func roleOf(r boardv1.Role) string {
	switch r {
	case boardv1.Role_ROLE_VIEWER:
		return "viewer"
	case boardv1.Role_ROLE_APPROVER:
		return "approver"
	case boardv1.Role_ROLE_ADMIN:
		return "admin"
	}
	return ""
}

// codeOf is a refusal's code as a connect code name ("invalid_argument",
// ...): the enum's numbers are connect's; one the board does not send is
// "internal".
func codeOf(c boardv1.LinkErrorCode) string {
	switch c {
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT,
		boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND,
		boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED,
		boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION,
		boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE:
		return connect.Code(c).String()
	}
	return connect.CodeInternal.String()
}
