//go:build unix

package store

// modesMatter: Unix permission bits say who may read the store.
const modesMatter = true
