package approvals

import (
	"errors"
	"strings"
)

// Action is what an agent does with an approval: show the card in the chat,
// or wait for the organisation's decision.
type Action string

const (
	// Card: nobody governs this approval; the chat may show the card.
	Card Action = "card"
	// Wait: wait for the board's decision. Never act before it comes.
	Wait Action = "wait"
)

// Ruling is the board's answer to who_decides.
type Ruling string

const (
	// NotGoverned is the board saying, explicitly, that no rule of the
	// organisation governs this approval.
	NotGoverned Ruling = "not-governed"
	// Governed is the board saying a rule governs it.
	Governed Ruling = "governed"
)

// WhatToDo turns the board's answer into Card or Wait. Only the board's
// explicit NotGoverned opens the card; anything else — governed, an answer
// this version does not know, no answer at all (""), a board that cannot be
// reached while one is configured — is Wait. Reading silence as "nothing
// governs this" is the mistake this function exists to prevent.
func WhatToDo(r Ruling) Action {
	if r == NotGoverned {
		return Card
	}
	return Wait
}

// ErrDigestMismatch is a decision that belongs to another operation than
// the one the agent holds.
var ErrDigestMismatch = errors.New("approvals: the decision is about another operation")

// StillTheSameThing reports whether a decision may be used for the
// operation the agent holds: the digest the board handed back must be the
// one the agent took when it asked. A decision with no digest is accepted:
// it is what a board sends for a request raised before the agent sent one,
// and refusing those would strand every approval in flight across an
// upgrade. Both digests come from Digest; neither is recomputed.
func StillTheSameThing(decided, held string) bool {
	return decided == "" || decided == held
}

// AccountOf reads the case for saying yes out of the channel an approval's
// why names, as one string: a string trimmed; a list of strings joined with
// newlines (a flow writes one line per step). Anything that is not words,
// and anything empty, is "" — and nothing should be drawn for it, because
// a heading over blank space reads as "there was no reasoning".
func AccountOf(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case []string:
		return strings.TrimSpace(strings.Join(v, "\n"))
	case []any:
		lines := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return ""
			}
			lines = append(lines, s)
		}
		return strings.TrimSpace(strings.Join(lines, "\n"))
	}
	return ""
}
