package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

var catFile = map[string]any{"id": "8f2.png", "name": "cat.png", "mediaType": "image/png", "url": "/files/8f2.png", "bytes": float64(5)}

const photoFlow = `{
	"version": "0.9", "start": "look",
	"state": {
		"photo": { "type": "file", "accept": "image/*" },
		"other": { "type": "file" },
		"seen": { "type": "string" }
	},
	"nodes": [ { "id": "look", "type": "llm", "prompt": "What is in {{photo}}? And {{photo}}, {{other}}.", "output": "seen" } ],
	"edges": [ { "from": "look", "to": "END" } ]
}`

// reader is a FileReader over a map of bytes by id.
type reader map[string][]byte

func (r reader) ReadFile(_ context.Context, f flow.File) ([]byte, error) {
	b, ok := r[f.ID]
	if !ok {
		return nil, errors.New("no such file")
	}
	return b, nil
}

// A value for a file channel is a file object or null, never the bytes:
// anything else is refused, naming the channel and what is wrong.
func TestFileChannelTakesOnlyTheObject(t *testing.T) {
	t.Parallel()
	g := build(t, load(t, photoFlow), flow.BuildOptions{Model: &testModel{}})
	withData := map[string]any{"data": "iVBORw0KGgo="}
	for k, v := range catFile {
		withData[k] = v
	}
	for name, tc := range map[string]struct {
		value any
		say   string
	}{
		"the bytes as base64": {"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", "a string"},
		"an object with data": {withData, `"data"`},
		"no id":               {map[string]any{"name": "cat.png", "mediaType": "image/png", "url": "/files/x", "bytes": float64(1)}, "id"},
		"bytes not a number":  {map[string]any{"id": "x.png", "name": "cat.png", "mediaType": "image/png", "url": "/files/x", "bytes": "5"}, "bytes"},
		"a list":              {[]any{catFile}, "a list"},
	} {
		_, err := g.Invoke(t.Context(), "", map[string]any{"photo": tc.value})
		var fe *flow.FileError
		if !errors.As(err, &fe) || fe.Channel != "photo" || !strings.Contains(fe.Problem, tc.say) {
			t.Errorf("%s: Invoke = %v, want a FileError for photo saying %s", name, err, tc.say)
		}
	}
	if _, err := g.Invoke(t.Context(), "", map[string]any{"photo": catFile}); err != nil {
		t.Errorf("Invoke with a file object = %v", err)
	}
	if _, err := g.Invoke(t.Context(), "", map[string]any{"photo": nil}); err != nil {
		t.Errorf("Invoke with null = %v", err)
	}
}

// A handler that writes bytes to a file channel fails its node.
func TestHandlerWritesBytesToAFileChannel(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.9", "start": "draw",
		"state": { "picture": { "type": "file" } },
		"nodes": [ { "id": "draw", "handler": "draw" } ],
		"edges": [ { "from": "draw", "to": "END" } ]
	}`)
	g := build(t, f, flow.BuildOptions{Registry: flow.Registry{Handlers: map[string]flow.Handler{
		"draw": set(flow.Update{"picture": []byte{0x89, 'P', 'N', 'G'}}),
	}}})
	_, err := g.Invoke(t.Context(), "", nil)
	var fe *flow.FileError
	if !errors.As(err, &fe) || fe.Channel != "picture" {
		t.Errorf("Invoke = %v, want a FileError for picture", err)
	}
}

// An ask for a file refuses an answer that is not one, and keeps waiting.
func TestAskForAFileRefusesWords(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.9", "start": "photo",
		"state": { "photo": { "type": "file", "accept": "image/*" } },
		"nodes": [ { "id": "photo", "type": "ask", "ask": "Send me the photo.", "output": "photo" } ],
		"edges": [ { "from": "photo", "to": "END" } ]
	}`)
	g := build(t, f, flow.BuildOptions{Checkpointer: &flow.MemoryCheckpointer{}})
	if _, err := g.Invoke(t.Context(), "t", nil); err != nil {
		t.Fatal(err)
	}
	_, err := g.Resume(t.Context(), "t", "a photo of my cat")
	var fe *flow.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("Resume with words = %v, want a FileError", err)
	}
	if p, err := g.Pending(t.Context(), "t"); err != nil || p == nil {
		t.Fatalf("Pending after a refused answer = %v, %v; want it still waiting", p, err)
	}
	if res, err := g.Resume(t.Context(), "t", catFile); err != nil || !res.Finished() {
		t.Errorf("Resume with a file = %+v, %v", res, err)
	}
}

// An llm node hands the model the files its prompt reads, each once, with
// their bytes.
func TestLLMGetsTheFilesItsPromptReads(t *testing.T) {
	t.Parallel()
	m := &testModel{}
	g := build(t, load(t, photoFlow), flow.BuildOptions{Model: m, Files: reader{"8f2.png": []byte("bytes")}})
	if _, err := g.Invoke(t.Context(), "", map[string]any{"photo": catFile}); err != nil {
		t.Fatal(err)
	}
	want := []flow.ModelFile{{File: flow.File{ID: "8f2.png", Name: "cat.png", MediaType: "image/png", URL: "/files/8f2.png", Bytes: 5}, Data: []byte("bytes")}}
	if diff := cmp.Diff(want, m.asked[0].Files); diff != "" {
		t.Errorf("ModelRequest.Files (-want +got):\n%s", diff)
	}

	// Without a FileReader the model gets the prompt alone.
	m2 := &testModel{}
	g2 := build(t, load(t, photoFlow), flow.BuildOptions{Model: m2})
	if _, err := g2.Invoke(t.Context(), "", map[string]any{"photo": catFile}); err != nil {
		t.Fatal(err)
	}
	if len(m2.asked[0].Files) != 0 {
		t.Errorf("ModelRequest.Files without a reader = %v, want none", m2.asked[0].Files)
	}

	// A file the store cannot read fails the node.
	g3 := build(t, load(t, photoFlow), flow.BuildOptions{Model: &testModel{}, Files: reader{}})
	if _, err := g3.Invoke(t.Context(), "", map[string]any{"photo": catFile}); err == nil {
		t.Error("Invoke with a file the reader has not = nil, want an error")
	}
}

func TestFits(t *testing.T) {
	t.Parallel()
	if !flow.Fits(flow.ChannelFile, catFile) || flow.Fits(flow.ChannelFile, "cat.png") || flow.Fits(flow.ChannelFile, []any{}) {
		t.Error("Fits(file, …) does not take exactly an object")
	}
}
