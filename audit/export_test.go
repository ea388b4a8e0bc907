package audit

// HashOf and ContentOf let the tests forge entries as someone with write
// access to the database could.
var (
	HashOf    = hashOf
	ContentOf = contentOf
)
