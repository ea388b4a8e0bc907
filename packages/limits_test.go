package packages

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
)

// TestArchiveSizeLimit: an archive of exactly MaxArchiveBytes is
// accepted, one byte more is refused.
func TestArchiveSizeLimit(t *testing.T) {
	t.Parallel()
	data, _ := build(t, agentDir(t))
	n := int64(len(data))
	if _, err := Scan(bytes.NewReader(data), Limits{MaxArchiveBytes: n}); err != nil {
		t.Errorf("Scan at the limit (%d bytes): %v", n, err)
	}
	if _, err := Scan(bytes.NewReader(data), Limits{MaxArchiveBytes: n - 1}); ReasonOf(err) != ReasonArchiveTooLarge {
		t.Errorf("Scan one byte over the limit = %v, want %s", err, ReasonArchiveTooLarge)
	}
}

// TestLimits: each limit accepts a package at it and refuses one past it.
func TestLimits(t *testing.T) {
	t.Parallel()
	random := make([]byte, 3000)
	rand.Read(random)
	files := map[string]string{"flow.json": helloFlow, "data.bin": string(random), "a/b/c/d.txt": "deep", strings.Repeat("n", 40): "long"}
	for i := range 5 {
		files[fmt.Sprintf("f%d.txt", i)] = "x"
	}
	dir := t.TempDir()
	writeTree(t, dir, files)
	data, m := build(t, dir)
	manifest, _ := m.Canonical()
	var total int64 = int64(len(manifest))
	for _, f := range m.Files {
		total += f.Size
	}
	entries := len(m.Files) + 1
	for _, c := range []struct {
		name     string
		at, over Limits
		want     Reason
	}{
		{"entries", Limits{MaxEntries: entries}, Limits{MaxEntries: entries - 1}, ReasonTooManyEntries},
		{"file size", Limits{MaxFileBytes: 3000}, Limits{MaxFileBytes: 2999}, ReasonFileTooLarge},
		{"total size", Limits{MaxTotalBytes: total}, Limits{MaxTotalBytes: total - 1}, ReasonTotalTooLarge},
		{"name length", Limits{MaxNameBytes: 40}, Limits{MaxNameBytes: 39}, ReasonNameTooLong},
		{"depth", Limits{MaxDepth: 4}, Limits{MaxDepth: 3}, ReasonTooDeep},
		{"manifest size", Limits{MaxManifestBytes: int64(len(manifest))}, Limits{MaxManifestBytes: int64(len(manifest)) - 1}, ReasonManifestTooLarge},
		{"flow size", Limits{MaxFlowBytes: int64(len(helloFlow))}, Limits{MaxFlowBytes: int64(len(helloFlow)) - 1}, ReasonFileTooLarge},
	} {
		if _, err := Scan(bytes.NewReader(data), c.at); err != nil {
			t.Errorf("%s: Scan at the limit: %v", c.name, err)
		}
		if _, err := Scan(bytes.NewReader(data), c.over); ReasonOf(err) != c.want {
			t.Errorf("%s: Scan past the limit = %v, want %s", c.name, err, c.want)
		}
	}
}

// TestRatio: a file of zeros past ratioFloor is refused by MaxRatio, and
// accepted when the ratio allows it; zeros under the floor always pass.
func TestRatio(t *testing.T) {
	t.Parallel()
	zeros := make([]byte, 4<<20)
	files := map[string][]byte{"flow.json": []byte(helloFlow), "zeros.bin": zeros}
	data := craft(t, []entry{{name: ManifestName, body: manifestOf(t, files, nil)}, {name: "flow.json", body: []byte(helloFlow)}, {name: "zeros.bin", body: zeros}}, tar.FormatPAX, nil)
	if _, err := Scan(bytes.NewReader(data), Limits{}); ReasonOf(err) != ReasonBomb {
		t.Errorf("Scan(4 MiB of zeros) = %v, want %s", err, ReasonBomb)
	}
	if _, err := Scan(bytes.NewReader(data), Limits{MaxRatio: 10000}); err != nil {
		t.Errorf("Scan(4 MiB of zeros, ratio 10000): %v", err)
	}
	small := make([]byte, ratioFloor/2)
	files = map[string][]byte{"flow.json": []byte(helloFlow), "zeros.bin": small}
	data = craft(t, []entry{{name: ManifestName, body: manifestOf(t, files, nil)}, {name: "flow.json", body: []byte(helloFlow)}, {name: "zeros.bin", body: small}}, tar.FormatPAX, nil)
	if _, err := Scan(bytes.NewReader(data), Limits{}); err != nil {
		t.Errorf("Scan(512 KiB of zeros): %v", err)
	}
}

// TestPadding: zeros after the tar's end, as GNU tar writes them, pass.
func TestPadding(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"flow.json": []byte(helloFlow)}
	es := []entry{{name: ManifestName, body: manifestOf(t, files, nil)}, {name: "flow.json", body: []byte(helloFlow)}}
	// The padding goes inside the gzip stream: craft a tar, pad it, gzip it.
	plain := craft(t, es, tar.FormatPAX, nil)
	var raw bytes.Buffer
	if err := gunzipTo(&raw, plain); err != nil {
		t.Fatal(err)
	}
	padded := append(raw.Bytes(), make([]byte, 10240-raw.Len()%10240)...)
	if _, err := Scan(bytes.NewReader(gzipBytes(t, padded)), Limits{}); err != nil {
		t.Errorf("Scan(padded to a 10 KiB record): %v", err)
	}
}
