package files_test

import (
	"testing"

	"github.com/symphonix/symphonix/files"
)

func TestSniff(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		head []byte
		want string
	}{
		"png":      {png, "image/png"},
		"html":     {[]byte("<!DOCTYPE html><p>hi"), "text/html; charset=utf-8"},
		"svg":      {[]byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>x</script></svg>`), "text/xml; charset=utf-8"},
		"pdf":      {[]byte("%PDF-1.7\n"), "application/pdf"},
		"flac":     {[]byte("fLaC\x00\x00\x00\x22"), "audio/flac"},
		"mp3 bare": {[]byte{0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0}, "audio/mpeg"},
		"mp3 id3":  {[]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), "audio/mpeg"},
		"m4a":      {[]byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00"), "audio/mp4"},
		"mp4":      {[]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), "video/mp4"},
		"avif":     {[]byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00"), "image/avif"},
		"ogg":      {[]byte("OggS\x00\x02\x00\x00"), "audio/ogg"},
		"text":     {[]byte("hello"), "text/plain; charset=utf-8"},
		"binary":   {[]byte{0, 1, 2, 3, 4}, "application/octet-stream"},
	} {
		if got := files.Sniff(tc.head); got != tc.want {
			t.Errorf("Sniff(%s) = %q, want %q", name, got, tc.want)
		}
	}
}

func TestAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		accept, mediaType string
		want              bool
	}{
		{"", "text/html", true},
		{"image/*", "image/png", true},
		{"image/*", "text/html; charset=utf-8", false},
		{"image/*, application/pdf", "application/pdf", true},
		{"IMAGE/PNG", "image/png", true},
		{"image/png", "image/jpeg", false},
		{"*/*", "video/mp4", true},
		{"audio/*", "audio/mpeg", true},
	} {
		if got := files.Accepts(tc.accept, tc.mediaType); got != tc.want {
			t.Errorf("Accepts(%q, %q) = %v, want %v", tc.accept, tc.mediaType, got, tc.want)
		}
	}
}

func TestInline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mediaType string
		want      bool
	}{
		{"image/png", true},
		{"audio/mpeg", true},
		{"video/mp4", true},
		{"image/svg+xml", false},
		{"text/html; charset=utf-8", false},
		{"text/xml", false},
		{"application/pdf", false},
		{"application/octet-stream", false},
	} {
		if got := files.Inline(tc.mediaType); got != tc.want {
			t.Errorf("Inline(%q) = %v, want %v", tc.mediaType, got, tc.want)
		}
	}
}
