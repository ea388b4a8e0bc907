package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/symphonix/symphonix/jcs"
)

// canonicalDetail is d as a canonical JSON object.
func canonicalDetail(d map[string]any) (json.RawMessage, error) {
	if d == nil {
		return json.RawMessage("{}"), nil
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("audit: detail: %w", err)
	}
	c, err := jcs.Canonical(data)
	if err != nil {
		return nil, fmt.Errorf("audit: detail: %w", err)
	}
	return c, nil
}

// hashOf is an entry's hash: jcs.Digest ("sha256:" + hex SHA-256
// of the RFC 8785 canonical form) of the JSON object
//
//	{"action":…, "actor":…, "at":…, "detail":{…}, "prev":…, "seq":…, "subject":…}
//
// where at is RFC 3339 in UTC with up to nine fractional digits and no
// trailing zeros (time.RFC3339Nano), detail is the entry's JSON object
// (not a string holding it) and seq is a number. Changing this changes
// every hash in every store: never do it.
func hashOf(e Entry) (string, error) {
	if len(e.Detail) == 0 || e.Detail[0] != '{' {
		return "", errors.New("audit: detail: not a JSON object")
	}
	doc := struct {
		Seq     int64           `json:"seq"`
		At      string          `json:"at"`
		Actor   string          `json:"actor"`
		Action  string          `json:"action"`
		Subject string          `json:"subject"`
		Detail  json.RawMessage `json:"detail"`
		Prev    string          `json:"prev"`
	}{e.Seq, e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action, e.Subject, e.Detail, e.Prev}
	h, err := jcs.DigestOf(doc)
	if err != nil {
		return "", fmt.Errorf("audit: hash: %w", err)
	}
	return h, nil
}

// contentOf is an entry's content hash: jcs.Digest of the JSON object
//
//	{"action":…, "actor":…, "at":…, "detail":{…}, "subject":…}
//
// encoded as in hashOf, without seq and prev. The transaction that records
// a change writes it with the entry, before the entry has a place in the
// chain, so an entry changed while it waits for the sequencer is found.
// Changing this changes every content hash in every store: never do it.
func contentOf(e Entry) (string, error) {
	if len(e.Detail) == 0 || e.Detail[0] != '{' {
		return "", errors.New("audit: detail: not a JSON object")
	}
	doc := struct {
		At      string          `json:"at"`
		Actor   string          `json:"actor"`
		Action  string          `json:"action"`
		Subject string          `json:"subject"`
		Detail  json.RawMessage `json:"detail"`
	}{e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action, e.Subject, e.Detail}
	h, err := jcs.DigestOf(doc)
	if err != nil {
		return "", fmt.Errorf("audit: content hash: %w", err)
	}
	return h, nil
}
