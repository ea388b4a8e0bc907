// Package files is the agent's own store of files: the photos people send
// and the pictures, recordings and documents a flow makes. A file is kept
// under its content's SHA-256, its media type decided by sniffing the bytes
// (never by the name or what the sender said), beside a small note of its
// name, type, size and the threads it belongs to. A flow's file channel
// holds only the small object (File), never the bytes.
//
// Nothing a caller sends reaches the file system as a path: an id is
// checked for its shape (ValidID) before any call, and every call is made
// inside the store's folder through an os.Root. A file is written to a
// temporary file and renamed into place, so a crash leaves no half file.
// See docs/files.md.
package files
