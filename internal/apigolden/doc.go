// Package apigolden holds messages of every kind that crosses the wire, saved
// from API v1 in its binary and JSON encodings, and a test that reads them
// with the code generated today. A change to proto/ that leaves a v1 client,
// agent or board unable to read what it already sends fails that test,
// whatever buf breaking says of it.
//
// The files in testdata/ are written once, by
//
//	go test ./internal/apigolden -update
//
// which writes only the files that are missing and refuses to change one
// that exists: a saved message is what a v1 program sends, and it does not
// change. A new message kind, oneof kind or enum value gets a new case and
// new files.
package apigolden
