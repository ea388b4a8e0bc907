package apigolden

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"

	_ "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

var update = flag.Bool("update", false, "write the golden files that are missing (never changes one that exists)")

// pkg is the API's protobuf package.
const pkg = "symphonix.board.v1"

// TestDecodeV1 reads every saved message, binary and JSON, with the code
// generated today, and compares it with the value the case builds.
func TestDecodeV1(t *testing.T) {
	t.Parallel()
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join("testdata", c.name+".binpb")
			js := filepath.Join("testdata", c.name+".json")
			if *update {
				writeOnce(t, bin, encodeBinary(t, c.msg))
				writeOnce(t, js, encodeJSON(t, c.msg))
			}

			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatalf("%v (a new case: go test -update writes its files)", err)
			}
			got := c.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(data, got); err != nil {
				t.Fatalf("proto.Unmarshal(%s) = %v", bin, err)
			}
			if len(got.ProtoReflect().GetUnknown()) > 0 {
				t.Errorf("proto.Unmarshal(%s): fields this code does not know: %x", bin, got.ProtoReflect().GetUnknown())
			}
			if !proto.Equal(got, c.msg) {
				t.Errorf("proto.Unmarshal(%s) differs from the v1 value (-want +got):\n%s", bin, cmp.Diff(c.msg, got, protocmp.Transform()))
			}

			data, err = os.ReadFile(js)
			if err != nil {
				t.Fatalf("%v (a new case: go test -update writes its files)", err)
			}
			got = c.msg.ProtoReflect().New().Interface()
			if err := protojson.Unmarshal(data, got); err != nil {
				t.Fatalf("protojson.Unmarshal(%s) = %v", js, err)
			}
			if !proto.Equal(got, c.msg) {
				t.Errorf("protojson.Unmarshal(%s) differs from the v1 value (-want +got):\n%s", js, cmp.Diff(c.msg, got, protocmp.Transform()))
			}
		})
	}
}

// TestEveryFileHasACase keeps testdata/ and the cases together: a saved
// message without its case would be checked by nothing.
func TestEveryFileHasACase(t *testing.T) {
	t.Parallel()
	names := make(map[string]bool)
	for _, c := range cases() {
		if names[c.name] {
			t.Errorf("case %s: named twice", c.name)
		}
		names[c.name] = true
	}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := filepath.Base(path)
		name := strings.TrimSuffix(strings.TrimSuffix(base, ".binpb"), ".json")
		if name == base || !names[name] {
			t.Errorf("%s: no case reads it", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCoverage checks that the cases hold every message kind that crosses
// the wire: the request and response of every RPC, every kind of
// LinkRequest and LinkResponse, the bodies of /auth/, every message of the
// package somewhere inside them, and every enum value but the zero ones.
func TestCoverage(t *testing.T) {
	t.Parallel()
	cs := cases()
	top := make(map[string][]protoreflect.FullName) // case name: message
	seen := coverage{messages: map[protoreflect.FullName]bool{}, fields: map[protoreflect.FullName]bool{}, values: map[protoreflect.FullName]bool{}}
	for _, c := range cs {
		top[c.name] = append(top[c.name], c.msg.ProtoReflect().Descriptor().FullName())
		seen.visit(c.msg.ProtoReflect())
	}
	has := func(prefix string, want protoreflect.FullName) bool {
		for name, types := range top {
			if (name == prefix || strings.HasPrefix(name, prefix+".")) && types[0] == want {
				return true
			}
		}
		return false
	}

	var files []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage(pkg, func(fd protoreflect.FileDescriptor) bool {
		files = append(files, fd)
		return true
	})
	if len(files) == 0 {
		t.Fatalf("no files of package %s are registered", pkg)
	}
	methods := 0
	for _, fd := range files {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				methods++
				base := string(sd.Name()) + "." + string(md.Name())
				if !has(base+".request", md.Input().FullName()) {
					t.Errorf("%s: no case %s.request holding a %s", md.FullName(), base, md.Input().FullName())
				}
				if !has(base+".response", md.Output().FullName()) {
					t.Errorf("%s: no case %s.response holding a %s", md.FullName(), base, md.Output().FullName())
				}
			}
		}
		walkMessages(fd.Messages(), func(md protoreflect.MessageDescriptor) {
			if !seen.messages[md.FullName()] {
				t.Errorf("message %s: in no case", md.FullName())
			}
			for k := range md.Oneofs().Len() {
				od := md.Oneofs().Get(k)
				if od.IsSynthetic() {
					continue
				}
				for f := range od.Fields().Len() {
					if fd := od.Fields().Get(f); !seen.fields[fd.FullName()] {
						t.Errorf("oneof %s: kind %s is set in no case", od.FullName(), fd.Name())
					}
				}
			}
		})
		walkEnums(fd, func(ed protoreflect.EnumDescriptor) {
			for k := range ed.Values().Len() {
				v := ed.Values().Get(k)
				if v.Number() != 0 && !seen.values[v.FullName()] {
					t.Errorf("enum value %s: in no case", v.FullName())
				}
			}
		})
	}
	if methods < 29 {
		t.Errorf("found %d methods in package %s, want at least the 29 of v1", methods, pkg)
	}
	for _, m := range authMessages {
		name := m.ProtoReflect().Descriptor().FullName()
		found := false
		for cn, types := range top {
			found = found || (strings.HasPrefix(cn, "auth.") && types[0] == name)
		}
		if !found {
			t.Errorf("/auth/ body %s: no case auth.* holding one", name)
		}
	}
}

// coverage is what the cases hold, at any depth.
type coverage struct {
	messages map[protoreflect.FullName]bool
	fields   map[protoreflect.FullName]bool // fields set
	values   map[protoreflect.FullName]bool // enum values
}

func (c coverage) visit(m protoreflect.Message) {
	c.messages[m.Descriptor().FullName()] = true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		c.fields[fd.FullName()] = true
		switch {
		case fd.IsList():
			for i := range v.List().Len() {
				c.value(fd, v.List().Get(i))
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				c.value(fd.MapValue(), mv)
				return true
			})
		default:
			c.value(fd, v)
		}
		return true
	})
}

func (c coverage) value(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch {
	case fd.Message() != nil:
		c.visit(v.Message())
	case fd.Enum() != nil:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			c.values[ev.FullName()] = true
		}
	}
}

func walkMessages(ms protoreflect.MessageDescriptors, f func(protoreflect.MessageDescriptor)) {
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		f(md)
		walkMessages(md.Messages(), f)
	}
}

func walkEnums(fd protoreflect.FileDescriptor, f func(protoreflect.EnumDescriptor)) {
	for i := range fd.Enums().Len() {
		f(fd.Enums().Get(i))
	}
	var nested func(ms protoreflect.MessageDescriptors)
	nested = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			md := ms.Get(i)
			for j := range md.Enums().Len() {
				f(md.Enums().Get(j))
			}
			nested(md.Messages())
		}
	}
	nested(fd.Messages())
}

func encodeBinary(t *testing.T, m proto.Message) []byte {
	t.Helper()
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// encodeJSON is m as Connect's JSON codec writes it, indented the same way
// every time (protojson varies its spacing on purpose).
func encodeJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	data, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// writeOnce writes data to path when path does not exist. A saved message
// that exists is never changed: one that differs from data fails the test,
// for it is a v1 message that this code would no longer write.
func writeOnce(t *testing.T, path string, data []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	case err != nil:
		t.Fatal(err)
	case !bytes.Equal(old, data):
		t.Errorf("-update: %s exists and differs from what this case writes now; saved v1 messages are never rewritten: give the changed value a new case", path)
	}
}
