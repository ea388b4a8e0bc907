package flow

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// File is the value a file channel holds (v0.9): a small object naming a
// file in the agent's own store, never the bytes. The store makes it; a
// flow passes it on.
type File struct {
	// ID names the file in the store: "8f2…e1.png".
	ID string `json:"id"`
	// Name is the name it was given, for people.
	Name string `json:"name"`
	// MediaType is its type, as the store sniffed it from its bytes.
	MediaType string `json:"mediaType"`
	// URL is where the served agent serves it: "/files/<id>".
	URL string `json:"url"`
	// Bytes is its size.
	Bytes int64 `json:"bytes"`
}

// fileKeys are a file object's keys, and the only ones it may have.
var fileKeys = []string{"bytes", "id", "mediaType", "name", "url"}

// MaxFileField is the longest any of a file object's strings may be.
const MaxFileField = 1024

// Value is f as a channel holds it: a JSON object.
func (f File) Value() map[string]any {
	return map[string]any{"id": f.ID, "name": f.Name, "mediaType": f.MediaType, "url": f.URL, "bytes": float64(f.Bytes)}
}

// FileError is a value refused for a file channel: anything but null or
// a file object {id, name, mediaType, url, bytes} — the bytes themselves
// above all.
type FileError struct {
	// Channel is the file channel written to.
	Channel string
	// Problem says what is wrong with the value.
	Problem string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("flow: channel %q is a file channel: it holds a file object {id, name, mediaType, url, bytes}, never the bytes: %s", e.Channel, e.Problem)
}

// FileOf reads a file channel's value: nil for null, the file for a file
// object, and otherwise an error saying what is wrong (Problem of a
// FileError).
func FileOf(v any) (*File, error) {
	if v == nil {
		return nil, nil
	}
	if f, ok := v.(File); ok {
		v = f.Value()
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the value is %s", KindOf(v))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(fileKeys, k) {
			return nil, fmt.Errorf("the object has %q, which a file object never has", clipField(k))
		}
	}
	var f File
	for _, k := range []struct {
		key string
		to  *string
	}{{"id", &f.ID}, {"name", &f.Name}, {"mediaType", &f.MediaType}, {"url", &f.URL}} {
		s, ok := m[k.key].(string)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: want a string, got %s", k.key, KindOf(m[k.key]))
		case strings.TrimSpace(s) == "":
			return nil, fmt.Errorf("%s: empty", k.key)
		case len(s) > MaxFileField:
			return nil, fmt.Errorf("%s: %d bytes, at most %d", k.key, len(s), MaxFileField)
		}
		*k.to = s
	}
	n, ok := m["bytes"].(float64)
	if !ok || n < 0 || n != math.Trunc(n) || n > 1<<53 {
		return nil, fmt.Errorf("bytes: want a whole number of bytes, got %s", KindOf(m["bytes"]))
	}
	f.Bytes = int64(n)
	return &f, nil
}

func clipField(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// checkFile refuses a value written to channel when it is a file channel
// and the value is not a file object.
func (g *Graph) checkFile(channel string, v any) error {
	c := g.flow.State[channel]
	if c == nil || c.Type != ChannelFile {
		return nil
	}
	if _, err := FileOf(v); err != nil {
		return &FileError{Channel: channel, Problem: err.Error()}
	}
	return nil
}

// FileReader reads the bytes of a file a file channel names: the agent's
// own store. Package flow never reaches the store itself.
type FileReader interface {
	ReadFile(ctx context.Context, f File) ([]byte, error)
}

// ModelFile is a file handed to a model with its prompt: the file's
// object and its bytes.
type ModelFile struct {
	File
	Data []byte
}

// MaxModelFiles is the most files one llm node hands its model: the file
// channels its prompt reads.
const MaxModelFiles = 8

// modelFiles reads the files an llm node's prompt reads — each {{channel}}
// of a file channel that holds a file — in the order the prompt names
// them, each once. Without a FileReader there are none.
func (g *Graph) modelFiles(ctx context.Context, prompt string, v State) ([]ModelFile, error) {
	if g.files == nil || !strings.Contains(prompt, "{{") {
		return nil, nil
	}
	var out []ModelFile
	seen := map[string]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(prompt, -1) {
		ch := strings.TrimSpace(m[1])
		if c := g.flow.State[ch]; c == nil || c.Type != ChannelFile || seen[ch] {
			continue
		}
		seen[ch] = true
		f, err := FileOf(v[ch])
		if err != nil {
			return nil, &FileError{Channel: ch, Problem: err.Error()}
		}
		if f == nil {
			continue
		}
		if len(out) == MaxModelFiles {
			return nil, fmt.Errorf("flow: the prompt reads more than %d files", MaxModelFiles)
		}
		data, err := g.files.ReadFile(ctx, *f)
		if err != nil {
			return nil, fmt.Errorf("flow: reading the file in channel %q: %w", ch, err)
		}
		out = append(out, ModelFile{File: *f, Data: data})
	}
	return out, nil
}
