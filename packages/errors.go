package packages

import (
	"errors"
	"fmt"
)

// Reason names why Scan refused an archive. The values are stable: a
// caller (the board's library, a test) branches on them, never on text.
type Reason string

// The reasons Scan, Build, Import and Instantiate refuse a package.
const (
	ReasonNotGzip          Reason = "not_gzip"          // not a gzip stream, or a corrupt one
	ReasonNotTar           Reason = "not_tar"           // the gzip'd bytes are not a tar archive
	ReasonGzipHeader       Reason = "gzip_header"       // a gzip header with a name, comment, extra field, other flag or time
	ReasonTrailingData     Reason = "trailing_data"     // bytes after the end of the archive
	ReasonArchiveTooLarge  Reason = "archive_too_large" // more compressed bytes than Limits.MaxArchiveBytes
	ReasonFileTooLarge     Reason = "file_too_large"    // one file over Limits.MaxFileBytes (or a flow over MaxFlowBytes)
	ReasonTotalTooLarge    Reason = "total_too_large"   // the files together over Limits.MaxTotalBytes
	ReasonBomb             Reason = "compression_bomb"  // uncompressed bytes over Limits.MaxRatio times the compressed
	ReasonTooManyEntries   Reason = "too_many_entries"  // more entries than Limits.MaxEntries
	ReasonUnsafePath       Reason = "unsafe_path"       // absolute, "..", ".", empty element, backslash, drive letter, control character
	ReasonBadName          Reason = "bad_name"          // a name that is not UTF-8
	ReasonNameTooLong      Reason = "name_too_long"     // a path over Limits.MaxNameBytes
	ReasonTooDeep          Reason = "too_deep"          // a path with more elements than Limits.MaxDepth
	ReasonSymlink          Reason = "symlink"           // a symbolic link
	ReasonHardLink         Reason = "hard_link"         // a hard link
	ReasonSpecialFile      Reason = "special_file"      // a device, a FIFO, a directory entry or any other non-regular entry
	ReasonDuplicate        Reason = "duplicate"         // the same path twice
	ReasonCaseCollision    Reason = "case_collision"    // two paths equal but for case, or a file where a folder is
	ReasonReservedPath     Reason = "reserved_path"     // .symphonix/ or .env, which a package never carries
	ReasonManifestFirst    Reason = "manifest_not_first"
	ReasonManifestTooLarge Reason = "manifest_too_large"
	ReasonBadManifest      Reason = "bad_manifest"      // unknown fields, not canonical, a field out of its rules
	ReasonUnlisted         Reason = "unlisted_file"     // a file the manifest does not list
	ReasonMissingFile      Reason = "missing_file"      // a file the manifest lists and the archive lacks
	ReasonSizeMismatch     Reason = "size_mismatch"     // a file's size is not the manifest's
	ReasonDigestMismatch   Reason = "digest_mismatch"   // a file's SHA-256, or the package's digest, is not the expected one
	ReasonInvalidFlow      Reason = "invalid_flow"      // flow.json does not load or validate
	ReasonInvalidTemplate  Reason = "invalid_template"  // template.json, a placeholder or a parameter value is wrong
	ReasonRequiresMismatch Reason = "requires_mismatch" // the manifest's requires or dsl_version are not the flow's
	ReasonSourceFile       Reason = "source_file"       // Build: a symlink or special file in the folder
)

// Error is a refused package: why (Reason), where (Path, the entry or
// manifest field, may be empty) and what was found (Detail).
type Error struct {
	Reason Reason
	Path   string
	Detail string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("package refused (%s): %s", e.Reason, e.Detail)
	}
	return fmt.Sprintf("package refused (%s): %q: %s", e.Reason, e.Path, e.Detail)
}

// ReasonOf returns the Reason of the first *Error in err's chain, or "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func refuse(r Reason, path, format string, args ...any) *Error {
	return &Error{Reason: r, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// Errors for the conditions callers branch on outside Scan.
var (
	// ErrExists reports an Import or Instantiate into a folder that exists.
	ErrExists = errors.New("packages: the target folder exists; choose a new one")
	// ErrNotInstalled reports a folder with no .symphonix/package.json.
	ErrNotInstalled = errors.New("packages: the folder was not imported from a package")
	// ErrSignature reports an envelope that does not carry enough valid
	// signatures by trusted keys for the expected digest.
	ErrSignature = errors.New("packages: signature not verified")
	// ErrKeyFile reports a key file that is unreadable, malformed or
	// readable by others than its owner.
	ErrKeyFile = errors.New("packages: key file")
)
