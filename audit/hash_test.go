package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// TestHashVectors pins what an entry's hash is: each vector's canonical
// text is written out by hand, and its hash is the SHA-256 of that text.
func TestHashVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/hash-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		About   string `json:"about"`
		Vectors []struct {
			Name  string `json:"name"`
			Entry struct {
				Seq     int64           `json:"seq"`
				At      time.Time       `json:"at"`
				Actor   string          `json:"actor"`
				Action  string          `json:"action"`
				Subject string          `json:"subject"`
				Detail  json.RawMessage `json:"detail"`
				Prev    string          `json:"prev"`
			} `json:"entry"`
			Canonical string `json:"canonical"`
			Hash      string `json:"hash"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range file.Vectors {
		sum := sha256.Sum256([]byte(v.Canonical))
		if want := "sha256:" + hex.EncodeToString(sum[:]); v.Hash != want {
			t.Fatalf("%s: vector is inconsistent: hash %s, sha256 of canonical %s", v.Name, v.Hash, want)
		}
		var detail map[string]any
		if err := json.Unmarshal(v.Entry.Detail, &detail); err != nil {
			t.Fatalf("%s: detail: %v", v.Name, err)
		}
		canon, err := canonicalDetail(detail)
		if err != nil {
			t.Fatalf("%s: canonicalDetail: %v", v.Name, err)
		}
		e := v.Entry
		got, err := hashOf(Entry{Seq: e.Seq, At: e.At, Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: canon, Prev: e.Prev})
		if err != nil {
			t.Fatalf("%s: hashOf: %v", v.Name, err)
		}
		if got != v.Hash {
			t.Errorf("%s: hashOf = %s, want %s (the hash of %s)", v.Name, got, v.Hash, v.Canonical)
		}
	}
}

// TestContentVectors pins an entry's content hash, what it carries before
// the sequencer gives it a seq, prev and hash: each vector's canonical text
// is written out by hand, and its content hash is the SHA-256 of that text.
func TestContentVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/hash-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct {
			Name  string `json:"name"`
			Entry struct {
				At      time.Time       `json:"at"`
				Actor   string          `json:"actor"`
				Action  string          `json:"action"`
				Subject string          `json:"subject"`
				Detail  json.RawMessage `json:"detail"`
			} `json:"entry"`
			Canonical string `json:"canonical"`
			Content   string `json:"content"`
		} `json:"content_vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no content vectors")
	}
	for _, v := range file.Vectors {
		sum := sha256.Sum256([]byte(v.Canonical))
		if want := "sha256:" + hex.EncodeToString(sum[:]); v.Content != want {
			t.Fatalf("%s: vector is inconsistent: content %s, sha256 of canonical %s", v.Name, v.Content, want)
		}
		var detail map[string]any
		if err := json.Unmarshal(v.Entry.Detail, &detail); err != nil {
			t.Fatalf("%s: detail: %v", v.Name, err)
		}
		canon, err := canonicalDetail(detail)
		if err != nil {
			t.Fatalf("%s: canonicalDetail: %v", v.Name, err)
		}
		e := v.Entry
		got, err := contentOf(Entry{At: e.At, Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: canon})
		if err != nil {
			t.Fatalf("%s: contentOf: %v", v.Name, err)
		}
		if got != v.Content {
			t.Errorf("%s: contentOf = %s, want %s (the hash of %s)", v.Name, got, v.Content, v.Canonical)
		}
	}
}
