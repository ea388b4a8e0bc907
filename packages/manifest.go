package packages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/jcs"
)

// ManifestName is the manifest's path: the first entry of every package.
const ManifestName = "manifest.json"

// Format is the manifest format this build reads and writes.
const Format = 1

// Kind is what a package holds.
type Kind string

// The kinds of package.
const (
	// KindAgent is a complete agent folder with its flow.json.
	KindAgent Kind = "agent"
	// KindTemplate is a flow with declared parameters (template.json) and
	// {{params.NAME}} placeholders in flow.json; Instantiate fills them.
	KindTemplate Kind = "template"
)

// Bounds of the manifest's fields (docs/limits.md).
const (
	MaxDescriptionBytes = 1024
	MaxVersionBytes     = 128
	MaxRequires         = 256 // entries of each requires list
	MaxRequireBytes     = 128 // one entry
)

// Manifest is manifest.json: what a package is and every file it holds.
// Its digest (Digest) names the package.
type Manifest struct {
	// Format is 1.
	Format int `json:"format"`
	// Name is "scope/name", each a lowercase DNS label.
	Name string `json:"name"`
	// Version is a semantic version (semver.org 2.0.0), checked strictly.
	Version string `json:"version"`
	Kind    Kind   `json:"kind"`
	// Description is up to MaxDescriptionBytes of UTF-8.
	Description string `json:"description"`
	// DSLVersion is the flow's "version".
	DSLVersion string   `json:"dsl_version"`
	Requires   Requires `json:"requires"`
	// Files lists every file but the manifest, sorted by path.
	Files []File `json:"files"`
}

// Requires is what the flow asks of the folder it runs in, by name only:
// it is the flow's own declaration, copied so a reader of the manifest
// sees it without reading the flow.
type Requires struct {
	// MCP: the servers of the flow's requires.mcp, sorted.
	MCP []string `json:"mcp"`
	// Inputs: the flow's inputs, sorted.
	Inputs []string `json:"inputs"`
	// Secrets: the environment variables of the flow's requires.env,
	// sorted. Names only: a package never carries a value.
	Secrets []string `json:"secrets"`
}

// File is one file of a package.
type File struct {
	// Path is slash-separated and relative.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// SHA256 is "sha256:" and the lowercase hex SHA-256 of the bytes.
	SHA256 string `json:"sha256"`
}

// Digest returns the package digest: "sha256:" of the manifest in RFC
// 8785 canonical JSON.
func (m *Manifest) Digest() (string, error) {
	return jcs.DigestOf(m)
}

// Canonical returns the manifest's bytes as a package carries them: its
// RFC 8785 form, whose SHA-256 is the package digest. Scan refuses a
// manifest not in this form, so for a scanned package these are the bytes
// the archive holds.
func (m *Manifest) Canonical() ([]byte, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return jcs.Canonical(data)
}

var (
	labelRE  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	semverRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
		`(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// CheckName reports whether name is "scope/name", each part a lowercase
// DNS label (1 to 63 of a-z, 0-9 and '-', not starting or ending with '-').
func CheckName(name string) error {
	scope, rest, ok := strings.Cut(name, "/")
	if !ok || !labelRE.MatchString(scope) || !labelRE.MatchString(rest) {
		return fmt.Errorf("name %q: want scope/name, each 1 to 63 of a-z, 0-9 and '-', not starting or ending with '-'", clip(name))
	}
	return nil
}

// CheckVersion reports whether v is a semantic version (semver.org 2.0.0):
// MAJOR.MINOR.PATCH without leading zeros, an optional -pre-release and
// +build, at most MaxVersionBytes.
func CheckVersion(v string) error {
	if len(v) > MaxVersionBytes || !semverRE.MatchString(v) {
		return fmt.Errorf("version %q: want a semantic version such as 1.2.3 or 1.2.3-rc.1 (semver.org)", clip(v))
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// check holds the manifest's own rules (not the archive's).
func (m *Manifest) check(lim Limits) error {
	bad := func(field, format string, args ...any) error {
		return refuse(ReasonBadManifest, field, format, args...)
	}
	if m.Format != Format {
		return bad("format", "format %d: this build reads format %d", m.Format, Format)
	}
	if err := CheckName(m.Name); err != nil {
		return bad("name", "%v", err)
	}
	if err := CheckVersion(m.Version); err != nil {
		return bad("version", "%v", err)
	}
	if m.Kind != KindAgent && m.Kind != KindTemplate {
		return bad("kind", "kind %q: want agent or template", clip(string(m.Kind)))
	}
	if len(m.Description) > MaxDescriptionBytes || !utf8.ValidString(m.Description) {
		return bad("description", "at most %d bytes of UTF-8", MaxDescriptionBytes)
	}
	if !flow.SupportsVersion(m.DSLVersion) {
		return bad("dsl_version", "dsl_version %q: not a flow version this build knows", clip(m.DSLVersion))
	}
	for field, list := range map[string][]string{"requires.mcp": m.Requires.MCP, "requires.inputs": m.Requires.Inputs, "requires.secrets": m.Requires.Secrets} {
		if list == nil {
			return bad(field, "missing: want an array")
		}
		if len(list) > MaxRequires {
			return bad(field, "%d entries: at most %d", len(list), MaxRequires)
		}
		for i, s := range list {
			if s == "" || len(s) > MaxRequireBytes || !utf8.ValidString(s) {
				return bad(field, "entry %d: 1 to %d bytes of UTF-8", i, MaxRequireBytes)
			}
			if i > 0 && list[i-1] >= s {
				return bad(field, "entries must be sorted and distinct")
			}
		}
	}
	if len(m.Files) == 0 {
		return bad("files", "no files: a package holds at least its flow.json")
	}
	if len(m.Files) >= lim.MaxEntries {
		return refuse(ReasonTooManyEntries, "files", "%d files: at most %d entries with the manifest", len(m.Files), lim.MaxEntries)
	}
	for i, f := range m.Files {
		if err := checkPath(f.Path, lim); err != nil {
			return err
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return bad("files", "paths must be sorted and distinct: %q after %q", clip(f.Path), clip(m.Files[i-1].Path))
		}
		if f.Size < 0 || f.Size > lim.MaxFileBytes {
			return refuse(ReasonFileTooLarge, f.Path, "size %d: at most %d bytes", f.Size, lim.MaxFileBytes)
		}
		if !digestRE.MatchString(f.SHA256) {
			return bad("files", "%q: sha256 must be sha256: and 64 lowercase hex digits", clip(f.Path))
		}
	}
	need := []string{"flow.json"}
	if m.Kind == KindTemplate {
		need = append(need, templateName)
	}
	for _, n := range need {
		if !slices.ContainsFunc(m.Files, func(f File) bool { return f.Path == n }) {
			return bad("files", "a package of kind %s holds %s", m.Kind, n)
		}
	}
	return nil
}

// parseManifest reads manifest.json strictly: no unknown fields, no
// duplicate keys, and the bytes exactly the canonical form of what they
// say, so one manifest has one spelling.
func parseManifest(data []byte, lim Limits) (*Manifest, error) {
	canon, err := jcs.Canonical(data)
	if err != nil {
		return nil, refuse(ReasonBadManifest, ManifestName, "not valid JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, refuse(ReasonBadManifest, ManifestName, "%v", err)
	}
	again, err := m.Canonical()
	if err != nil || !bytes.Equal(again, canon) || !bytes.Equal(canon, data) {
		return nil, refuse(ReasonBadManifest, ManifestName, "not in canonical form (RFC 8785) or with a null where an array belongs")
	}
	if err := m.check(lim); err != nil {
		return nil, err
	}
	return &m, nil
}

// requiresOf is what a flow declares, as a manifest lists it.
func requiresOf(f *flow.Flow) Requires {
	r := Requires{MCP: []string{}, Inputs: []string{}, Secrets: []string{}}
	if f.Requires != nil {
		for name := range f.Requires.MCP {
			r.MCP = append(r.MCP, name)
		}
		r.Secrets = append(r.Secrets, f.Requires.Env...)
	}
	r.Inputs = append(r.Inputs, f.Inputs...)
	for _, l := range []*[]string{&r.MCP, &r.Inputs, &r.Secrets} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return r
}
