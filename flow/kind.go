package flow

import "slices"

// The kinds of flow (v0.17): whose flow this is. The API reference names
// FLOW_KINDS and SYSTEM_KIND without listing them; docs/flow.md says what
// was decided. A flow that says no kind is the person's.
const (
	// SystemKind is a flow the system runs for itself.
	SystemKind = "system"
	// UserKind is a flow a person wrote or installed.
	UserKind = "user"
)

// FlowKinds lists every kind a flow may say.
var FlowKinds = []string{SystemKind, UserKind}

// IsSystemFlow reports whether f is the system's own flow rather than a
// person's: only a flow that says kind "system" is.
func IsSystemFlow(f *Flow) bool {
	return f != nil && f.Kind == SystemKind
}

// knownKind reports whether k is one of FlowKinds.
func knownKind(k string) bool {
	return slices.Contains(FlowKinds, k)
}
