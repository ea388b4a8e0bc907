package packages

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// RecordPath is where Import and Instantiate record what they wrote,
// relative to the folder.
const RecordPath = ".symphonix/package.json"

// maxRecordBytes bounds the record Installed reads.
const maxRecordBytes = 64 << 10

// Installation is what a folder holds and from which package.
type Installation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    Kind   `json:"kind"`
	// Digest is the package digest.
	Digest string `json:"digest"`
	// Template is set on a folder Instantiate made: the template's kind
	// is then the package's, and Params are the values it was filled with.
	Template bool              `json:"template,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
}

// Import scans the package in r and unpacks it into dir, a folder that
// must not exist yet (its parent must). The files are written into a new
// temporary folder beside dir while Scan reads them, and renamed to dir
// only when Scan accepts the whole package, so a refused or interrupted
// import leaves nothing behind. Import records the package in
// dir/.symphonix/package.json. It writes files only: nothing is run.
func Import(r io.Reader, dir string, lim Limits) (*Package, error) {
	return unpack(r, dir, lim, nil)
}

// Instantiate makes a new agent folder dir from the template package in
// r: every file but template.json as Import writes it, and flow.json with
// its {{params.NAME}} placeholders filled from params. Each value is
// checked against its parameter's type, every parameter without a
// default must be given, a name the template does not declare is refused,
// and the filled flow must validate.
func Instantiate(r io.Reader, dir string, params map[string]string, lim Limits) (*Package, error) {
	if params == nil {
		params = map[string]string{}
	}
	return unpack(r, dir, lim, params)
}

func unpack(r io.Reader, dir string, lim Limits, params map[string]string) (p *Package, err error) {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".unpacking-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	instantiate := params != nil
	put := func(name string) (io.WriteCloser, error) {
		if instantiate && (name == "flow.json" || name == templateName) {
			return nopCloser{io.Discard}, nil
		}
		target := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		return os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	s, err := scan(r, lim, put)
	if err != nil {
		return nil, err
	}
	rec := Installation{Name: s.pkg.Manifest.Name, Version: s.pkg.Manifest.Version, Kind: s.pkg.Manifest.Kind, Digest: s.pkg.Digest}
	if instantiate {
		if s.pkg.Manifest.Kind != KindTemplate {
			return nil, refuse(ReasonInvalidTemplate, "kind", "package %s is an agent, not a template: import it instead", s.pkg.Manifest.Name)
		}
		values, err := s.template.values(params)
		if err != nil {
			return nil, err
		}
		filled, err := fill(s.flowJSON, values)
		if err != nil {
			return nil, err
		}
		if _, err := checkFlow(filled); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, "flow.json"), filled, 0o644); err != nil {
			return nil, err
		}
		rec.Template, rec.Params = true, params
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, ".symphonix"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, filepath.FromSlash(RecordPath)), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	return &s.pkg, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Installed reads what Import or Instantiate recorded in dir. A folder
// with no record is ErrNotInstalled.
func Installed(dir string) (*Installation, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(RecordPath)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotInstalled, dir)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var in Installation
	if _, err := readStrict(f, maxRecordBytes, &in); err != nil {
		return nil, fmt.Errorf("packages: %s: %w", RecordPath, err)
	}
	if CheckName(in.Name) != nil || CheckVersion(in.Version) != nil || !digestRE.MatchString(in.Digest) {
		return nil, fmt.Errorf("packages: %s: not a record this build wrote", RecordPath)
	}
	return &in, nil
}
