//go:build !unix

package store

// modesMatter: outside Unix the permission bits do not say who may read
// the store, so they are not checked.
const modesMatter = false
