// Package library is the agent's side of the board's library of signed
// solution packages: it downloads one version, checks it on this machine
// the way the board checked it before admitting it, and only then writes it
// into a new folder. Nothing it writes is run: an installed folder is inert
// until an operator serves it.
//
// The checks, each refusing with a *CheckError that names it:
//
//  1. CheckArchive: packages.Scan accepts the archive (safe paths, no
//     links, within the limits, every file as the manifest says);
//  2. CheckDigest: the manifest's digest is the one the board's record
//     names, and the one pinned with Options.Digest when set;
//  3. CheckSignature: the signature envelope signs that digest with at
//     least the scope's threshold of the scope's trusted keys, as the board
//     publishes them with the download, the trust being the package's own
//     scope's;
//  4. CheckVersion: the package is the name and version that was asked
//     for, and the board's record of it says the same as its manifest.
//
// A package of the wrong kind for the command (a template given to
// Install, an agent to Instantiate) is refused as CheckKind.
package library

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/packages"
)

// Check names one of the checks an install makes.
type Check string

// The checks, in the order they are made once the archive is here.
const (
	// CheckVersion: the package is the name (and version, when one was
	// asked for) wanted, as the board's record and the manifest both say.
	CheckVersion Check = "version"
	// CheckKind: an agent package for Install, a template for
	// Instantiate.
	CheckKind Check = "kind"
	// CheckArchive: packages.Scan accepts the archive.
	CheckArchive Check = "archive"
	// CheckDigest: the manifest's digest is the board's record's and the
	// pinned one.
	CheckDigest Check = "digest"
	// CheckSignature: trusted keys of the package's scope signed the
	// digest, at least as many as its threshold.
	CheckSignature Check = "signature"
)

// CheckError is an install refused by one of its checks. Nothing was
// written but the temporary download, which is removed.
type CheckError struct {
	Check Check
	// Name is the package asked for.
	Name string
	Err  error
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("%s: refused by the %s check: %v", e.Name, e.Check, e.Err)
}

func (e *CheckError) Unwrap() error { return e.Err }

// CheckOf is the Check of the first *CheckError in err's chain, or "".
func CheckOf(err error) Check {
	var ce *CheckError
	if errors.As(err, &ce) {
		return ce.Check
	}
	return ""
}

// Ref names what to install: a package, and one of its versions or ""
// for the newest the library has that is not yanked.
type Ref struct {
	Name    string
	Version string
}

func (r Ref) String() string {
	if r.Version == "" {
		return r.Name
	}
	return r.Name + "@" + r.Version
}

// ParseRef reads "scope/name" or "scope/name@version".
func ParseRef(s string) (Ref, error) {
	name, version, hasVersion := strings.Cut(s, "@")
	if err := packages.CheckName(name); err != nil {
		return Ref{}, fmt.Errorf("%q: want scope/name or scope/name@version: %w", clip(s), err)
	}
	if hasVersion {
		if err := packages.CheckVersion(version); err != nil {
			return Ref{}, fmt.Errorf("%q: the version after @: %w", clip(s), err)
		}
	}
	return Ref{Name: name, Version: version}, nil
}

// Options tune an install.
type Options struct {
	// Digest, when set, pins the package: "sha256:" and 64 lowercase hex
	// digits, the digest its manifest must have. The download names the
	// version by this digest too, so a yanked version can be installed by
	// its digest.
	Digest string
	// Limits: what Scan reads, as packages.Limits; zero fields take the
	// defaults. The download is refused past Limits.MaxArchiveBytes.
	Limits packages.Limits
	// Silence: how long the download may go without a message from the
	// board before it is given up; zero means DefaultSilence.
	Silence time.Duration
}

// DefaultSilence is how long a download waits for the board's next
// message: a board that stops sending mid-download (or never starts)
// does not hold the install for ever.
const DefaultSilence = time.Minute

// Installed is what an install wrote.
type Installed struct {
	Name    string
	Version string
	// Digest: the package digest, checked.
	Digest string
	Kind   packages.Kind
	// Dir: the new folder.
	Dir string
	// Signers: the key ids of the trusted signatures that were counted.
	Signers []string
}

// Install downloads ref from the library through client, checks it (see
// the package comment), and unpacks it into dir with packages.Import,
// which refuses a folder that exists. The package must be of kind agent:
// a template is refused, naming Instantiate.
func Install(ctx context.Context, client boardv1connect.PackageServiceClient, ref Ref, dir string, opts Options) (*Installed, error) {
	return install(ctx, client, ref, dir, opts, nil)
}

// Instantiate downloads the template ref, checks it as Install does, and
// makes a new agent folder dir from it with packages.Instantiate: every
// parameter filled from params, checked against its type, and the filled
// flow validated. The folder's install record names the template
// package. An agent package is refused, naming Install.
func Instantiate(ctx context.Context, client boardv1connect.PackageServiceClient, ref Ref, dir string, params map[string]string, opts Options) (*Installed, error) {
	if params == nil {
		params = map[string]string{}
	}
	return install(ctx, client, ref, dir, opts, params)
}

func install(ctx context.Context, client boardv1connect.PackageServiceClient, ref Ref, dir string, opts Options, params map[string]string) (*Installed, error) {
	if err := packages.CheckName(ref.Name); err != nil {
		return nil, err
	}
	if ref.Version != "" {
		if err := packages.CheckVersion(ref.Version); err != nil {
			return nil, err
		}
	}
	if opts.Digest != "" && !IsDigest(opts.Digest) {
		return nil, fmt.Errorf("digest %q: want sha256: and 64 lowercase hex digits", clip(opts.Digest))
	}
	dir = filepath.Clean(dir)
	if err := checkTarget(dir); err != nil {
		return nil, err
	}
	lim := opts.Limits
	if lim.MaxArchiveBytes <= 0 {
		lim.MaxArchiveBytes = packages.DefaultLimits.MaxArchiveBytes
	}
	want := packages.KindAgent
	if params != nil {
		want = packages.KindTemplate
	}

	// The download is kept beside dir, readable by this user alone, and
	// removed whatever happens.
	f, err := os.CreateTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".download-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	silence := opts.Silence
	if silence <= 0 {
		silence = DefaultSilence
	}
	head, err := download(ctx, client, ref, opts.Digest, f, lim.MaxArchiveBytes, silence)
	if err != nil {
		return nil, err
	}
	checked, err := Verify(head, f, ref, want, opts.Digest, lim)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var pkg *packages.Package
	if params == nil {
		pkg, err = packages.Import(f, dir, lim)
	} else {
		pkg, err = packages.Instantiate(f, dir, params, lim)
	}
	if err != nil {
		return nil, err
	}
	if pkg.Digest != checked.Digest {
		// The file changed between the checks and the import: what was
		// written is not what was checked.
		os.RemoveAll(dir)
		return nil, &CheckError{Check: CheckDigest, Name: ref.Name, Err: fmt.Errorf("the download changed on disk while it was installed (%s, checked %s)", pkg.Digest, checked.Digest)}
	}
	checked.Dir = dir
	return checked, nil
}

// checkTarget refuses a dir that exists, or whose parent does not, before
// anything is downloaded.
func checkTarget(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%w: %s", packages.ErrExists, dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	st, err := os.Stat(filepath.Dir(dir))
	if err != nil {
		return fmt.Errorf("%s: the folder to install into must be in one that exists: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a folder", dir, filepath.Dir(dir))
	}
	return nil
}

// Verify makes the install's checks on a download: head, the first message
// of the board's Download, and the archive in r (read from its start). ref
// is what was asked for, kind what the command installs, pin the digest
// the user pinned ("" for none). It returns what the package is; nothing is
// written.
func Verify(head *boardv1.DownloadHead, r io.ReadSeeker, ref Ref, kind packages.Kind, pin string, lim packages.Limits) (*Installed, error) {
	refuse := func(c Check, format string, args ...any) error {
		return &CheckError{Check: c, Name: ref.Name, Err: fmt.Errorf(format, args...)}
	}
	rec := head.GetVersion()
	if rec == nil {
		return nil, refuse(CheckVersion, "the board sent no record of the version")
	}
	if err := checkRecord(rec, ref, kind); err != nil {
		return nil, err
	}

	// 1. The archive is safe and every file is as its manifest says.
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	pkg, err := packages.Scan(r, lim)
	if err != nil {
		return nil, &CheckError{Check: CheckArchive, Name: ref.Name, Err: err}
	}
	m := pkg.Manifest
	if m.Name != ref.Name || (ref.Version != "" && m.Version != ref.Version) {
		return nil, refuse(CheckVersion, "the archive holds %s@%s, not %s", m.Name, m.Version, ref)
	}
	if m.Name != rec.GetName() || m.Version != rec.GetVersion() || string(m.Kind) != rec.GetKind() {
		return nil, refuse(CheckVersion, "the archive holds %s@%s (%s), the board's record says %s@%s (%s)",
			m.Name, m.Version, m.Kind, clip(rec.GetName()), clip(rec.GetVersion()), clip(rec.GetKind()))
	}
	if m.Kind != kind {
		return nil, kindError(ref, m.Kind)
	}

	// 2. The manifest is the one the board's record and the pin name.
	if err := packages.Verify(pkg, rec.GetDigest()); err != nil {
		return nil, &CheckError{Check: CheckDigest, Name: ref.Name, Err: fmt.Errorf("not the board's record of %s@%s: %w", m.Name, m.Version, err)}
	}
	if pin != "" {
		if err := packages.Verify(pkg, pin); err != nil {
			return nil, &CheckError{Check: CheckDigest, Name: ref.Name, Err: fmt.Errorf("not the digest pinned: %w", err)}
		}
	}

	// 3. Enough trusted keys of the package's scope signed that digest.
	signers, err := checkSignature(head, m.Name, pkg.Digest)
	if err != nil {
		return nil, &CheckError{Check: CheckSignature, Name: ref.Name, Err: err}
	}
	return &Installed{Name: m.Name, Version: m.Version, Digest: pkg.Digest, Kind: m.Kind, Signers: signers}, nil
}

// checkRecord checks the board's record against what was asked, before
// the archive is read.
func checkRecord(rec *boardv1.PackageVersion, ref Ref, kind packages.Kind) error {
	if rec.GetName() != ref.Name || (ref.Version != "" && rec.GetVersion() != ref.Version) {
		return &CheckError{Check: CheckVersion, Name: ref.Name, Err: fmt.Errorf("the board sent %s@%s, not %s", clip(rec.GetName()), clip(rec.GetVersion()), ref)}
	}
	if k := packages.Kind(rec.GetKind()); k != kind && (k == packages.KindAgent || k == packages.KindTemplate) {
		return kindError(ref, k)
	}
	return nil
}

// kindError refuses a package of the other kind, naming the command for it.
func kindError(ref Ref, got packages.Kind) error {
	var err error
	if got == packages.KindTemplate {
		err = fmt.Errorf("%s is a template: make an agent folder from it with agent instantiate (and its --param values)", ref)
	} else {
		err = fmt.Errorf("%s is an agent package, not a template: install it with agent install", ref)
	}
	return &CheckError{Check: CheckKind, Name: ref.Name, Err: err}
}

// checkSignature checks the envelope against the trust the board sent:
// the trust of the package's own scope, its keys' ids those of their
// bytes, revoked keys left out. It returns the ids of the trusted keys
// that signed.
func checkSignature(head *boardv1.DownloadHead, name, digest string) ([]string, error) {
	trust := head.GetTrust()
	scope, _, _ := strings.Cut(name, "/")
	if trust == nil {
		return nil, errors.New("the board sent no trust for the package's scope")
	}
	if trust.GetScope() != scope {
		return nil, fmt.Errorf("the board sent the trust of scope %q, not of %q", clip(trust.GetScope()), scope)
	}
	if trust.GetThreshold() < 1 {
		return nil, fmt.Errorf("scope %q admits nobody (threshold %d): an admin of the board has not put it", scope, trust.GetThreshold())
	}
	if n := len(trust.GetKeys()); n > maxTrustedKeys {
		return nil, fmt.Errorf("scope %q: %d keys: at most %d", scope, n, maxTrustedKeys)
	}
	var keys []ed25519.PublicKey
	byID := map[string]ed25519.PublicKey{}
	for _, k := range trust.GetKeys() {
		if k.GetRevoked() != nil {
			continue
		}
		pub, err := packages.ParsePublicKey(k.GetPublicKey())
		if err != nil {
			return nil, fmt.Errorf("scope %q: key %s: %w", scope, clip(k.GetKeyId()), err)
		}
		if id := packages.KeyID(pub); id != k.GetKeyId() {
			return nil, fmt.Errorf("scope %q: key %s: its id is not that of its bytes (%s)", scope, clip(k.GetKeyId()), id)
		}
		keys = append(keys, pub)
		byID[k.GetKeyId()] = pub
	}
	env, err := packages.ReadEnvelope(bytes.NewReader(head.GetEnvelope()))
	if err != nil {
		return nil, err
	}
	if err := packages.VerifySignature(env, digest, keys, int(trust.GetThreshold())); err != nil {
		return nil, fmt.Errorf("scope %q asks for %d: %w", scope, trust.GetThreshold(), err)
	}
	msg := packages.PAE(env.PayloadType, env.Payload)
	var signers []string
	for _, s := range env.Signatures {
		if pub, ok := byID[s.KeyID]; ok && ed25519.Verify(pub, msg, s.Sig) {
			signers = append(signers, s.KeyID)
			delete(byID, s.KeyID)
		}
	}
	return signers, nil
}

// maxTrustedKeys bounds the keys of one scope's trust an install reads.
const maxTrustedKeys = 1024

// IsDigest reports whether s is a package digest: "sha256:" and 64
// lowercase hex digits.
func IsDigest(s string) bool { return packages.CheckDigest(s) == nil }

// clip is s cut to 80 bytes for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
