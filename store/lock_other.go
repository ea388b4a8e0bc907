//go:build !unix

package store

import "os"

// lockFile does nothing where there is no flock: two boards on one store
// are not detected there.
func lockFile(*os.File) error { return nil }
