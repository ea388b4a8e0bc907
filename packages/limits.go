package packages

// Limits bounds what Scan reads. The zero value of a field means its
// default (DefaultLimits); docs/limits.md lists them.
type Limits struct {
	// MaxArchiveBytes: compressed bytes read. An archive of exactly this
	// many bytes is accepted.
	MaxArchiveBytes int64
	// MaxFileBytes: one file, uncompressed.
	MaxFileBytes int64
	// MaxTotalBytes: every file together, uncompressed.
	MaxTotalBytes int64
	// MaxRatio: uncompressed bytes over compressed bytes read so far,
	// checked once more than ratioFloor bytes are uncompressed.
	MaxRatio int64
	// MaxEntries: tar entries, the manifest included.
	MaxEntries int
	// MaxNameBytes: one path, in bytes.
	MaxNameBytes int
	// MaxDepth: elements of one path ("a/b/c" is 3).
	MaxDepth int
	// MaxManifestBytes: manifest.json.
	MaxManifestBytes int64
	// MaxFlowBytes: flow.json and template.json, which Scan reads into
	// memory to validate.
	MaxFlowBytes int64
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{
	MaxArchiveBytes:  64 << 20,
	MaxFileBytes:     64 << 20,
	MaxTotalBytes:    256 << 20,
	MaxRatio:         100,
	MaxEntries:       10000,
	MaxNameBytes:     255,
	MaxDepth:         16,
	MaxManifestBytes: 4 << 20,
	MaxFlowBytes:     1 << 20,
}

// ratioFloor is how many uncompressed bytes Scan reads before it holds
// MaxRatio: a small file of zeros compresses far better than 100:1 and
// harms nobody.
const ratioFloor = 1 << 20

// orDefault fills the zero fields of l from DefaultLimits.
func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.MaxArchiveBytes > 0 {
		d.MaxArchiveBytes = l.MaxArchiveBytes
	}
	if l.MaxFileBytes > 0 {
		d.MaxFileBytes = l.MaxFileBytes
	}
	if l.MaxTotalBytes > 0 {
		d.MaxTotalBytes = l.MaxTotalBytes
	}
	if l.MaxRatio > 0 {
		d.MaxRatio = l.MaxRatio
	}
	if l.MaxEntries > 0 {
		d.MaxEntries = l.MaxEntries
	}
	if l.MaxNameBytes > 0 {
		d.MaxNameBytes = l.MaxNameBytes
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxManifestBytes > 0 {
		d.MaxManifestBytes = l.MaxManifestBytes
	}
	if l.MaxFlowBytes > 0 {
		d.MaxFlowBytes = l.MaxFlowBytes
	}
	return d
}
