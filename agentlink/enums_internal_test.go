package agentlink

import (
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
)

// TestEnums: every value the link's enums have is read as this package's
// word for it, and a value this agent does not know as the safe one.
func TestEnums(t *testing.T) {
	says := map[boardv1.Say]string{
		boardv1.Say_SAY_YES: "yes", boardv1.Say_SAY_NO: "no", boardv1.Say_SAY_CANCELLED: "cancelled",
		boardv1.Say_SAY_EXPIRED: "expired", boardv1.Say_SAY_UNSPECIFIED: "no", 42: "no",
	}
	for v, want := range says {
		if got := sayOf(v); got != want {
			t.Errorf("sayOf(%s) = %q, want %q", v, got, want)
		}
	}
	states := map[boardv1.ApprovalState]string{
		boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED: "", boardv1.ApprovalState_APPROVAL_STATE_PENDING: "pending",
		boardv1.ApprovalState_APPROVAL_STATE_APPROVED: "approved", boardv1.ApprovalState_APPROVAL_STATE_REJECTED: "rejected",
		boardv1.ApprovalState_APPROVAL_STATE_CANCELLED: "cancelled", boardv1.ApprovalState_APPROVAL_STATE_EXPIRED: "expired",
		boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED: "superseded", 42: "unknown",
	}
	for v, want := range states {
		if got := stateOf(v); got != want {
			t.Errorf("stateOf(%s) = %q, want %q", v, got, want)
		}
	}
	doors := map[boardv1.Door]string{
		boardv1.Door_DOOR_PAIRING: DoorPairing, boardv1.Door_DOOR_VERIFY: DoorVerify, boardv1.Door_DOOR_NONE: DoorNone,
		boardv1.Door_DOOR_UNSPECIFIED: "", 42: "",
	}
	for v, want := range doors {
		if got := doorOf(v); got != want {
			t.Errorf("doorOf(%s) = %q, want %q", v, got, want)
		}
	}
	rulings := map[boardv1.Ruling]approvals.Ruling{
		boardv1.Ruling_RULING_GOVERNED: approvals.Governed, boardv1.Ruling_RULING_NOT_GOVERNED: approvals.NotGoverned,
		boardv1.Ruling_RULING_UNSPECIFIED: "", 42: "",
	}
	for v, want := range rulings {
		if got := rulingOf(v); got != want || (want == "" && approvals.WhatToDo(got) != approvals.Wait) {
			t.Errorf("rulingOf(%s) = %q, want %q", v, got, want)
		}
	}
	roles := map[boardv1.Role]string{
		boardv1.Role_ROLE_VIEWER: "viewer", boardv1.Role_ROLE_APPROVER: "approver", boardv1.Role_ROLE_ADMIN: "admin",
		boardv1.Role_ROLE_UNSPECIFIED: "", 42: "",
	}
	for v, want := range roles {
		if got := roleOf(v); got != want {
			t.Errorf("roleOf(%s) = %q, want %q", v, got, want)
		}
	}
	codes := map[boardv1.LinkErrorCode]string{
		boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT:    "invalid_argument",
		boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND:           "not_found",
		boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED:  "resource_exhausted",
		boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION: "failed_precondition",
		boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL:            "internal",
		boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE:         "unavailable",
		boardv1.LinkErrorCode_LINK_ERROR_CODE_UNSPECIFIED:         "internal",
		7: "internal", // permission_denied: not one the board sends
	}
	for v, want := range codes {
		if got := codeOf(v); got != want {
			t.Errorf("codeOf(%s) = %q, want %q", v, got, want)
		}
	}
}
