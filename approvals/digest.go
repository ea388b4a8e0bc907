package approvals

import "github.com/symphonix/symphonix/jcs"

// Digest is the digest of the operation an approval puts in front of a
// person: the jcs digest of the JSON object
//
//	{"show": show, "account": account, or null when it is ""}
//
// show holds the values shown, by the channel (or field) they came from;
// account is the case for saying yes (AccountOf). The agent takes it once,
// when it asks, and keeps it with the question; the board never computes
// it. Changing this changes every digest in flight: never do it.
func Digest(show map[string]any, account string) (string, error) {
	var acc any
	if account != "" {
		acc = account
	}
	return jcs.DigestOf(map[string]any{"show": show, "account": acc})
}
