package packages

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Meta is what Build is told; the rest of the manifest comes from the
// folder.
type Meta struct {
	// Name: required, "scope/name".
	Name string
	// Version: required, a semantic version.
	Version string
	// Description: empty means the flow's description.
	Description string
}

// IgnoreName is the file in a folder that lists what Build leaves out.
const IgnoreName = ".packageignore"

// epoch is every entry's modification time: a package's bytes depend on
// its files, never on when they were written.
var epoch = time.Unix(0, 0).UTC()

// Build writes the package of the folder dir to w and returns its
// manifest. The same files give the same bytes: entries sorted by path,
// the manifest first, mode 0644, owner 0, no user names, the epoch as
// every time, a gzip header with neither name nor time. Build leaves out
// .symphonix/ (the agent's runtime state), every .env and .env.* (its
// secrets), the .packageignore file and what it lists; it refuses a
// symbolic link or a special file anywhere else. A folder holding
// template.json is a template, any other an agent. Build checks the
// result as Scan would and returns the Scan error if it is refused.
func Build(dir string, meta Meta, w io.Writer, lim Limits) (*Manifest, error) {
	lim = lim.orDefault()
	if err := CheckName(meta.Name); err != nil {
		return nil, fmt.Errorf("packages: %w", err)
	}
	if err := CheckVersion(meta.Version); err != nil {
		return nil, fmt.Errorf("packages: %w", err)
	}
	// The folder itself may be reached through a link; nothing under it may.
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	ignore, err := readIgnore(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if left(rel, d.IsDir(), ignore) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return refuse(ReasonSourceFile, rel, "a symbolic link: a package holds regular files only (list it in %s to leave it out)", IgnoreName)
		case !d.Type().IsRegular():
			return refuse(ReasonSourceFile, rel, "not a regular file (list it in %s to leave it out)", IgnoreName)
		}
		if err := checkPath(rel, lim); err != nil {
			return err
		}
		size, sum, err := hashFile(p)
		if err != nil {
			return err
		}
		files = append(files, File{Path: rel, Size: size, SHA256: sum})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })

	m := &Manifest{Format: Format, Name: meta.Name, Version: meta.Version, Kind: KindAgent, Files: files}
	if slices.ContainsFunc(files, func(f File) bool { return f.Path == templateName }) {
		m.Kind = KindTemplate
	}
	flowJSON, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		return nil, fmt.Errorf("packages: %s holds no flow.json: %w", dir, err)
	}
	if m.Kind == KindTemplate {
		raw, err := os.ReadFile(filepath.Join(dir, templateName))
		if err != nil {
			return nil, err
		}
		t, err := parseTemplate(raw)
		if err != nil {
			return nil, err
		}
		fl, err := checkTemplate(t, flowJSON)
		if err != nil {
			return nil, err
		}
		m.DSLVersion, m.Requires, m.Description = fl.Version, requiresOf(fl), fl.Description
	} else {
		fl, err := checkFlow(flowJSON)
		if err != nil {
			return nil, err
		}
		m.DSLVersion, m.Requires, m.Description = fl.Version, requiresOf(fl), fl.Description
	}
	if meta.Description != "" {
		m.Description = meta.Description
	}
	if err := m.check(lim); err != nil {
		return nil, err
	}
	head, err := m.Canonical()
	if err != nil {
		return nil, err
	}

	bw := bufio.NewWriter(w)
	gz, err := gzip.NewWriterLevel(bw, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(header(ManifestName, int64(len(head)))); err != nil {
		return nil, err
	}
	if _, err := tw.Write(head); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := copyFile(tw, filepath.Join(dir, filepath.FromSlash(f.Path)), f); err != nil {
			return nil, err
		}
	}
	for _, c := range []io.Closer{tw, gz} {
		if err := c.Close(); err != nil {
			return nil, err
		}
	}
	return m, bw.Flush()
}

// header is a file's tar header, the same for the same path and size.
func header(name string, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644,
		ModTime: epoch, Format: tar.FormatPAX,
	}
}

func hashFile(p string) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile writes one file into the tar and checks that it is still what
// the manifest says.
func copyFile(tw *tar.Writer, p string, want File) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := tw.WriteHeader(header(want.Path, want.Size)); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(fh, want.Size+1))
	if err != nil && n <= want.Size {
		return fmt.Errorf("packages: %s changed while building: %w", want.Path, err)
	}
	if n != want.Size || "sha256:"+hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
		return fmt.Errorf("packages: %s changed while building; build again", want.Path)
	}
	return nil
}

// readIgnore reads the folder's .packageignore: one pattern a line
// (path.Match syntax), blank lines and lines starting with # skipped. A
// pattern with a slash matches the path from the folder; one without
// matches the name at any depth; a trailing slash matches folders only.
func readIgnore(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, IgnoreName))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pats []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := path.Match(strings.TrimSuffix(line, "/"), ""); err != nil {
			return nil, fmt.Errorf("packages: %s line %d: %q: %v", IgnoreName, i+1, clip(line), err)
		}
		pats = append(pats, line)
	}
	return pats, nil
}

// left reports whether Build leaves rel out.
func left(rel string, isDir bool, ignore []string) bool {
	if rel == IgnoreName || reserved(rel) {
		return true
	}
	base := path.Base(rel)
	for _, pat := range ignore {
		dirOnly := strings.HasSuffix(pat, "/")
		pat = strings.TrimSuffix(pat, "/")
		if dirOnly && !isDir {
			continue
		}
		target := base
		if strings.Contains(pat, "/") {
			target = rel
		}
		if ok, _ := path.Match(strings.TrimPrefix(pat, "/"), target); ok {
			return true
		}
	}
	return false
}
