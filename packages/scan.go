package packages

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// Package is what Scan found in a safe, consistent archive.
type Package struct {
	Manifest Manifest
	// Digest is the package digest: Manifest.Digest.
	Digest string
	// ArchiveBytes is the compressed size read.
	ArchiveBytes int64
}

// Scan reads a package from r and checks everything about it: the gzip
// and tar framing, every limit, every entry's type and path, the manifest
// (first, strict, canonical), every file against the manifest's size and
// SHA-256, and the flow (or the template and its flow) against flow's own
// validation and the manifest's requires. It streams: memory does not
// grow with the package, only flow.json and template.json are held. Any
// refusal is an *Error with its Reason.
func Scan(r io.Reader, lim Limits) (*Package, error) {
	s, err := scan(r, lim, nil)
	if err != nil {
		return nil, err
	}
	return &s.pkg, nil
}

// Verify checks that a scanned package is the one wanted: its digest is
// want, the digest a signature or a pin names. Scan has already checked
// every file against the manifest; Verify ties the manifest to want.
func Verify(p *Package, want string) error {
	got, err := p.Manifest.Digest()
	if err != nil {
		return err
	}
	if got != p.Digest || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return refuse(ReasonDigestMismatch, ManifestName, "package digest %s, want %s", got, clip(want))
	}
	return nil
}

// scanned is Scan's result with what Import and Instantiate need more.
type scanned struct {
	pkg      Package
	flow     *flow.Flow
	flowJSON []byte
	template *Template
}

// sink receives a file's bytes as Scan reads them; nil discards.
type sink func(path string) (io.WriteCloser, error)

// counter counts the compressed bytes read and refuses one past max.
type counter struct {
	r   io.Reader
	n   int64
	max int64
}

var errArchiveTooLarge = errors.New("archive too large")

func (c *counter) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, errArchiveTooLarge
	}
	if room := c.max + 1 - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n, errArchiveTooLarge
	}
	return n, err
}

func scan(r io.Reader, lim Limits, put sink) (*scanned, error) {
	lim = lim.orDefault()
	c := &counter{r: r, max: lim.MaxArchiveBytes}
	s, err := scanCounted(c, lim, put)
	if errors.Is(err, errArchiveTooLarge) {
		return nil, refuse(ReasonArchiveTooLarge, "", "more than %d bytes", lim.MaxArchiveBytes)
	}
	if err != nil {
		return nil, err
	}
	s.pkg.ArchiveBytes = c.n
	return s, nil
}

func scanCounted(c *counter, lim Limits, put sink) (*scanned, error) {
	// gzip reads through br byte by byte, so what follows the one gzip
	// member is left in br to be looked at.
	br := bufio.NewReader(c)
	if err := plainHeader(br); err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		if errors.Is(err, errArchiveTooLarge) {
			return nil, err
		}
		return nil, refuse(ReasonNotGzip, "", "%v", err)
	}
	gz.Multistream(false)
	framing := func(err error) error {
		switch {
		case errors.Is(err, errArchiveTooLarge):
			return err
		case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
			return refuse(ReasonNotGzip, "", "%v", err)
		}
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		var ce flate.CorruptInputError
		if errors.As(err, &ce) {
			return refuse(ReasonNotGzip, "", "%v", err)
		}
		return refuse(ReasonNotTar, "", "%v", err)
	}
	tr := tar.NewReader(gz)
	s := &scanned{}
	var (
		m       *Manifest
		want    map[string]File
		seen    = map[string]bool{}
		files   = map[string]bool{} // folded paths of files
		dirs    = map[string]bool{} // folded paths of folders
		total   int64
		entries int
		buf     = make([]byte, 32<<10)
		tmplRaw []byte
	)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, framing(err)
		}
		entries++
		if entries > lim.MaxEntries {
			return nil, refuse(ReasonTooManyEntries, "", "more than %d entries", lim.MaxEntries)
		}
		name := h.Name
		switch h.Typeflag {
		case tar.TypeReg:
		case tar.TypeSymlink:
			return nil, refuse(ReasonSymlink, clip(name), "a symbolic link to %q", clip(h.Linkname))
		case tar.TypeLink:
			return nil, refuse(ReasonHardLink, clip(name), "a hard link to %q", clip(h.Linkname))
		case tar.TypeChar, tar.TypeBlock:
			return nil, refuse(ReasonSpecialFile, clip(name), "a device")
		case tar.TypeFifo:
			return nil, refuse(ReasonSpecialFile, clip(name), "a FIFO")
		default:
			return nil, refuse(ReasonSpecialFile, clip(name), "entry type %q: a package holds regular files only", h.Typeflag)
		}
		if err := checkPath(name, lim); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, refuse(ReasonDuplicate, name, "twice in the archive")
		}
		seen[name] = true
		folded := strings.ToLower(name)
		if files[folded] || dirs[folded] {
			return nil, refuse(ReasonCaseCollision, name, "collides with another entry on a case-insensitive system, or with a folder")
		}
		files[folded] = true
		for i := range len(folded) {
			if folded[i] == '/' {
				if files[folded[:i]] {
					return nil, refuse(ReasonCaseCollision, name, "under %q, which is a file", clip(name[:i]))
				}
				dirs[folded[:i]] = true
			}
		}
		if h.Size < 0 {
			return nil, refuse(ReasonNotTar, name, "negative size")
		}

		if m == nil {
			if name != ManifestName {
				return nil, refuse(ReasonManifestFirst, name, "the first entry must be %s", ManifestName)
			}
			if h.Size > lim.MaxManifestBytes {
				return nil, refuse(ReasonManifestTooLarge, name, "%d bytes: at most %d", h.Size, lim.MaxManifestBytes)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, framing(err)
			}
			total += int64(len(data))
			if m, err = parseManifest(data, lim); err != nil {
				return nil, err
			}
			// The bytes are the canonical form (parseManifest holds it), so
			// their SHA-256 is the package digest.
			s.pkg.Digest = sum256(data)
			want = make(map[string]File, len(m.Files))
			for _, f := range m.Files {
				want[f.Path] = f
			}
			continue
		}

		f, ok := want[name]
		if !ok {
			return nil, refuse(ReasonUnlisted, name, "not in the manifest")
		}
		delete(want, name)
		if h.Size != f.Size {
			return nil, refuse(ReasonSizeMismatch, name, "%d bytes, the manifest says %d", h.Size, f.Size)
		}
		if h.Size > lim.MaxFileBytes {
			return nil, refuse(ReasonFileTooLarge, name, "%d bytes: at most %d", h.Size, lim.MaxFileBytes)
		}
		if total+h.Size > lim.MaxTotalBytes {
			return nil, refuse(ReasonTotalTooLarge, name, "the files together over %d bytes", lim.MaxTotalBytes)
		}
		keep := name == "flow.json" || name == templateName
		if keep && h.Size > lim.MaxFlowBytes {
			return nil, refuse(ReasonFileTooLarge, name, "%d bytes: at most %d", h.Size, lim.MaxFlowBytes)
		}
		var kept bytes.Buffer
		var w io.WriteCloser
		if put != nil {
			if w, err = put(name); err != nil {
				return nil, err
			}
		}
		hash := sha256.New()
		for {
			n, err := tr.Read(buf)
			if n > 0 {
				total += int64(n)
				if total > ratioFloor && total > lim.MaxRatio*c.n {
					if w != nil {
						w.Close()
					}
					return nil, refuse(ReasonBomb, name, "more than %d times the compressed bytes", lim.MaxRatio)
				}
				hash.Write(buf[:n])
				if keep {
					kept.Write(buf[:n])
				}
				if w != nil {
					if _, werr := w.Write(buf[:n]); werr != nil {
						w.Close()
						return nil, werr
					}
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				if w != nil {
					w.Close()
				}
				return nil, framing(err)
			}
		}
		if w != nil {
			if err := w.Close(); err != nil {
				return nil, err
			}
		}
		got := "sha256:" + hex.EncodeToString(hash.Sum(nil))
		if got != f.SHA256 {
			return nil, refuse(ReasonDigestMismatch, name, "sha256 %s, the manifest says %s", got, f.SHA256)
		}
		switch name {
		case "flow.json":
			s.flowJSON = kept.Bytes()
		case templateName:
			tmplRaw = kept.Bytes()
		}
	}
	if m == nil {
		return nil, refuse(ReasonManifestFirst, "", "an empty archive: no %s", ManifestName)
	}
	if len(want) > 0 {
		missing := make([]string, 0, len(want))
		for p := range want {
			missing = append(missing, p)
		}
		slices.Sort(missing)
		return nil, refuse(ReasonMissingFile, missing[0], "in the manifest, not in the archive (%d missing)", len(missing))
	}
	// Nothing but zeros (the padding some tar writers add to a record)
	// may follow the tar's end: never a hidden entry, never a second stream.
	if err := zerosOnly(gz, buf); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, refuse(ReasonNotGzip, "", "%v", err)
	}
	// One gzip member and nothing after it: never a second member, which
	// may hold no data and still carry bytes in its header.
	switch _, err := br.ReadByte(); {
	case err == nil:
		return nil, refuse(ReasonTrailingData, "", "bytes after the end of the gzip stream")
	case errors.Is(err, errArchiveTooLarge):
		return nil, err
	case err != io.EOF:
		return nil, refuse(ReasonNotGzip, "", "%v", err)
	}

	var fl *flow.Flow
	if m.Kind == KindTemplate {
		if s.template, err = parseTemplate(tmplRaw); err != nil {
			return nil, err
		}
		fl, err = checkTemplate(s.template, s.flowJSON)
	} else {
		fl, err = checkFlow(s.flowJSON)
	}
	if err != nil {
		return nil, err
	}
	if fl.Version != m.DSLVersion {
		return nil, refuse(ReasonRequiresMismatch, "dsl_version", "the manifest says %q, flow.json %q", m.DSLVersion, clip(fl.Version))
	}
	if req := requiresOf(fl); !slices.Equal(req.MCP, m.Requires.MCP) || !slices.Equal(req.Inputs, m.Requires.Inputs) || !slices.Equal(req.Secrets, m.Requires.Secrets) {
		return nil, refuse(ReasonRequiresMismatch, "requires", "the manifest's requires are not flow.json's (mcp %v, inputs %v, secrets %v)", req.MCP, req.Inputs, req.Secrets)
	}
	s.flow = fl
	s.pkg.Manifest = *m
	return s, nil
}

// plainHeader refuses a gzip header that carries anything: a flag (a
// file name, a comment, an extra field of up to 64 KiB, a header
// checksum, a reserved bit) or a time. Such bytes are in no file and no
// manifest, so no digest or signature covers them. A header too short or
// not gzip's is left for gzip.NewReader to refuse.
func plainHeader(br *bufio.Reader) error {
	h, err := br.Peek(10)
	if errors.Is(err, errArchiveTooLarge) {
		return err
	}
	if len(h) < 10 || h[0] != 0x1f || h[1] != 0x8b {
		return nil
	}
	if h[3] != 0 {
		return refuse(ReasonGzipHeader, "", "the gzip header has flags %#02x (a name, a comment, an extra field, a header checksum or a reserved bit); a package's has none", h[3])
	}
	if h[4]|h[5]|h[6]|h[7] != 0 {
		return refuse(ReasonGzipHeader, "", "the gzip header has a time; a package's has none")
	}
	return nil
}

// maxPadding bounds the zeros Scan reads after a tar's end.
const maxPadding = 64 << 10

// zerosOnly reads what follows the tar's end: at most maxPadding zero
// bytes, then the end of the gzip stream.
func zerosOnly(gz io.Reader, buf []byte) error {
	var n int64
	for {
		k, err := gz.Read(buf)
		for _, b := range buf[:k] {
			if b != 0 {
				return refuse(ReasonTrailingData, "", "data after the end of the archive")
			}
		}
		n += int64(k)
		if n > maxPadding {
			return refuse(ReasonTrailingData, "", "more than %d bytes after the end of the archive", maxPadding)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.Is(err, errArchiveTooLarge) {
				return err
			}
			return refuse(ReasonTrailingData, "", "after the archive: %v", err)
		}
	}
}

// sum256 is "sha256:" and the lowercase hex SHA-256 of data.
func sum256(data []byte) string {
	h := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(h[:])
}
