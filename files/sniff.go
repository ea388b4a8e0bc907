package files

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// SniffBytes is how much of a file's start Sniff reads.
const SniffBytes = 512

// types maps each media type the store names to the extension its ids
// end with. A type not here is stored as application/octet-stream.
var types = map[string]string{
	"image/png":                    "png",
	"image/jpeg":                   "jpg",
	"image/gif":                    "gif",
	"image/webp":                   "webp",
	"image/bmp":                    "bmp",
	"image/x-icon":                 "ico",
	"image/avif":                   "avif",
	"image/heic":                   "heic",
	"audio/mpeg":                   "mp3",
	"audio/wave":                   "wav",
	"audio/ogg":                    "ogg",
	"audio/flac":                   "flac",
	"audio/mp4":                    "m4a",
	"audio/aiff":                   "aiff",
	"audio/midi":                   "mid",
	"video/mp4":                    "mp4",
	"video/webm":                   "webm",
	"video/avi":                    "avi",
	"application/pdf":              "pdf",
	"application/zip":              "zip",
	"application/x-gzip":           "gz",
	"application/x-rar-compressed": "rar",
	"application/wasm":             "wasm",
	"application/postscript":       "ps",
	"font/woff":                    "woff",
	"font/woff2":                   "woff2",
	"font/ttf":                     "ttf",
	"font/otf":                     "otf",
	"text/plain":                   "txt",
	"text/html":                    "html",
	"text/xml":                     "xml",
	"application/octet-stream":     "bin",
}

func knownExtension(ext string) bool {
	for _, e := range types {
		if e == ext {
			return true
		}
	}
	return false
}

// Sniff decides a file's media type from its first bytes (at most
// SniffBytes are read): net/http's sniffing, then a few signatures it does
// not know (FLAC, MP3 without an ID3 tag, MP4 audio, AVIF and HEIC
// images), and application/octet-stream for anything not in the store's
// table. "application/ogg" is named "audio/ogg". A text type keeps its
// charset ("text/plain; charset=utf-8").
func Sniff(head []byte) string {
	if len(head) > SniffBytes {
		head = head[:SniffBytes]
	}
	if t := signature(head); t != "" {
		return t
	}
	t := http.DetectContentType(head)
	essence, params, err := mime.ParseMediaType(t)
	if err != nil {
		return "application/octet-stream"
	}
	if essence == "application/ogg" {
		essence = "audio/ogg"
	}
	if _, ok := types[essence]; !ok {
		return "application/octet-stream"
	}
	if cs := params["charset"]; cs != "" && strings.HasPrefix(essence, "text/") {
		return mime.FormatMediaType(essence, map[string]string{"charset": cs})
	}
	return essence
}

// signature is the type of the few files http.DetectContentType cannot
// tell, or tells too broadly; "" for any other.
func signature(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "audio/flac"
	case len(b) >= 3 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 && b[1]&0x06 != 0 && b[2]&0xF0 != 0xF0:
		// An MPEG audio frame header: eleven sync bits, a layer, and a
		// bitrate index that is not "bad".
		return "audio/mpeg"
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		switch string(b[8:12]) {
		case "M4A ", "M4B ":
			return "audio/mp4"
		case "avif", "avis":
			return "image/avif"
		case "heic", "heix", "mif1":
			return "image/heic"
		}
	}
	return ""
}

// Essence is a media type without its parameters, lower-case.
func Essence(mediaType string) string {
	t, _, _ := strings.Cut(mediaType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// extension is the extension of mediaType's ids.
func extension(mediaType string) string {
	if e, ok := types[Essence(mediaType)]; ok {
		return e
	}
	return "bin"
}

// Inline reports whether a file of mediaType is safe for a browser to show
// in the page: an image, audio or video type that cannot carry script. SVG
// is never one (the store does not sniff it as an image anyway); anything
// else is served as an attachment.
func Inline(mediaType string) bool {
	t := Essence(mediaType)
	if strings.Contains(t, "svg") || strings.Contains(t, "xml") {
		return false
	}
	_, known := types[t]
	return known && (strings.HasPrefix(t, "image/") || strings.HasPrefix(t, "audio/") || strings.HasPrefix(t, "video/"))
}

// CheckAccept checks an accept list (a channel's accept: media types or
// "type/*" patterns, separated by commas, such as "image/*,
// application/pdf") for its shape. "" takes anything.
func CheckAccept(accept string) error {
	if strings.TrimSpace(accept) == "" {
		return nil
	}
	for _, p := range strings.Split(accept, ",") {
		p = strings.TrimSpace(p)
		top, sub, ok := strings.Cut(p, "/")
		if !ok || top == "" || sub == "" || strings.ContainsAny(p, " ;") || top == "*" && sub != "*" {
			return fmt.Errorf("accept: %q is not a media type or type/*", clip(p))
		}
	}
	return nil
}

// Accepts reports whether a file of mediaType fits accept: "" takes
// anything; otherwise one of its entries is the type itself, "type/*"
// for its top-level type, or "*/*". Matching is on the type's essence,
// in any case.
func Accepts(accept, mediaType string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	t := Essence(mediaType)
	top, _, _ := strings.Cut(t, "/")
	for _, p := range strings.Split(accept, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == t || p == "*/*" || p == top+"/*" {
			return true
		}
	}
	return false
}
