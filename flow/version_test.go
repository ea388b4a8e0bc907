package flow

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// baseFlow is the smallest valid flow, as a map a test can change.
func baseFlow(version string) map[string]any {
	return map[string]any{
		"version": version,
		"start":   "a",
		"nodes":   []any{map[string]any{"id": "a", "handler": "h"}},
		"edges":   []any{map[string]any{"from": "a", "to": "END"}},
	}
}

// node returns the base flow's first node, to change.
func node(f map[string]any) map[string]any {
	return f["nodes"].([]any)[0].(map[string]any)
}

// useFeature turns a valid base flow into one that uses each feature and
// nothing newer.
var useFeature = map[string]func(f map[string]any){
	FeatureState: func(f map[string]any) { f["state"] = map[string]any{"x": map[string]any{}} },
	FeatureLimits: func(f map[string]any) {
		f["state"] = map[string]any{"x": map[string]any{}}
		f["edges"] = []any{map[string]any{
			"from": "a", "type": "conditional", "router": "r",
			"routes": map[string]any{"again": "a", "done": "END"},
			"limits": map[string]any{"again": map[string]any{"max": 2, "then": "done"}},
		}}
	},
	FeatureLimitPer: func(f map[string]any) {
		f["state"] = map[string]any{"x": map[string]any{}}
		f["edges"] = []any{map[string]any{
			"from": "a", "type": "conditional", "router": "r",
			"routes": map[string]any{"again": "a", "done": "END"},
			"limits": map[string]any{"again": map[string]any{"max": 2, "then": "done", "per": "a"}},
		}}
	},
	FeatureLLMNode: func(f map[string]any) {
		f["nodes"] = []any{map[string]any{"id": "a", "type": "llm", "prompt": "hi", "output": "o"}}
	},
	FeatureRetry: func(f map[string]any) { node(f)["retry"] = map[string]any{"maxAttempts": 2} },
	FeatureOnError: func(f map[string]any) {
		node(f)["onError"] = "b"
		f["nodes"] = append(f["nodes"].([]any), map[string]any{"id": "b", "handler": "h"})
		f["edges"] = append(f["edges"].([]any), map[string]any{"from": "b", "to": "END"})
	},
	FeatureTools: func(f map[string]any) { f["tools"] = []any{"t"} },
	FeatureToolNode: func(f map[string]any) {
		f["nodes"] = []any{map[string]any{"id": "a", "type": "tool", "tool": "t"}}
	},
	FeatureToolsNode: func(f map[string]any) {
		f["nodes"] = []any{map[string]any{"id": "a", "type": "tools", "calls": "c", "output": "o"}}
	},
	FeatureApproval: func(f map[string]any) { node(f)["approval"] = map[string]any{"ask": "Go on?"} },
	FeatureFanout: func(f map[string]any) {
		f["nodes"] = []any{
			map[string]any{"id": "a", "type": "fanout", "over": "items", "to": "b", "as": "item"},
			map[string]any{"id": "b", "handler": "h"},
		}
		f["edges"] = []any{map[string]any{"from": "b", "to": "END"}}
	},
	FeatureDescription: func(f map[string]any) { f["description"] = "What it is for." },
	FeatureInputs:      func(f map[string]any) { f["inputs"] = []any{"x"} },
	FeatureOutputs:     func(f map[string]any) { f["outputs"] = []any{"x"} },
	FeatureRequires:    func(f map[string]any) { f["requires"] = map[string]any{"env": []any{"KEY"}} },
	FeatureChannelType: func(f map[string]any) {
		f["state"] = map[string]any{"x": map[string]any{"type": "string"}}
	},
	FeatureChannelDescription: func(f map[string]any) {
		f["state"] = map[string]any{"x": map[string]any{"description": "An x."}}
	},
	FeatureNodeDescription: func(f map[string]any) { node(f)["description"] = "Does a." },
	FeatureWhen: func(f map[string]any) {
		f["edges"] = []any{map[string]any{
			"from": "a", "type": "conditional", "router": "r",
			"routes": map[string]any{"done": "END"},
			"when":   map[string]any{"done": "always"},
		}}
	},
	FeatureToolDescription: func(f map[string]any) {
		f["tools"] = []any{map[string]any{"name": "t", "description": "Does t."}}
	},
	FeatureAsk: func(f map[string]any) {
		f["nodes"] = []any{map[string]any{"id": "a", "type": "ask", "ask": "Which?", "output": "o"}}
	},
	FeatureFileChannel: func(f map[string]any) {
		f["state"] = map[string]any{"p": map[string]any{"type": "file"}}
	},
	FeatureConversation: func(f map[string]any) { f["conversation"] = true },
	FeatureRemembers: func(f map[string]any) {
		f["state"] = map[string]any{"x": map[string]any{"remembers": true}}
	},
	FeaturePackages: func(f map[string]any) {
		f["requires"] = map[string]any{"packages": map[string]any{"pg": "^8.0.0"}}
	},
	FeatureServices: func(f map[string]any) {
		f["requires"] = map[string]any{"services": map[string]any{"db": "A database client."}}
	},
	FeatureMCP: func(f map[string]any) {
		f["requires"] = map[string]any{"mcp": map[string]any{"crm": map[string]any{"command": "crm"}}}
	},
	FeatureViews: func(f map[string]any) { f["views"] = []any{} },
	FeatureSchema: func(f map[string]any) {
		f["nodes"] = []any{map[string]any{"id": "a", "type": "llm", "prompt": "hi", "output": "o",
			"schema": map[string]any{"type": "string"}}}
	},
	FeatureKind: func(f map[string]any) { f["kind"] = "system" },
	FeatureAgentNode: func(f map[string]any) {
		f["state"] = map[string]any{"o": map[string]any{}}
		f["nodes"] = []any{map[string]any{"id": "a", "type": "agent", "agent": "helper", "output": "o"}}
	},
}

// featurePath is where each feature's refusal is reported in its flow.
var featurePath = map[string]string{
	FeatureState:              "state",
	FeatureLimits:             "edges[0].limits",
	FeatureLimitPer:           "edges[0].limits.again.per",
	FeatureLLMNode:            "nodes[0].type",
	FeatureRetry:              "nodes[0].retry",
	FeatureOnError:            "nodes[0].onError",
	FeatureTools:              "tools",
	FeatureToolNode:           "nodes[0].type",
	FeatureToolsNode:          "nodes[0].type",
	FeatureApproval:           "nodes[0].approval",
	FeatureFanout:             "nodes[0].type",
	FeatureDescription:        "description",
	FeatureInputs:             "inputs",
	FeatureOutputs:            "outputs",
	FeatureRequires:           "requires",
	FeatureChannelType:        "state.x.type",
	FeatureChannelDescription: "state.x.description",
	FeatureNodeDescription:    "nodes[0].description",
	FeatureWhen:               "edges[0].when",
	FeatureToolDescription:    "tools[0]",
	FeatureAsk:                "nodes[0].type",
	FeatureFileChannel:        "state.p.type",
	FeatureConversation:       "conversation",
	FeatureRemembers:          "state.x.remembers",
	FeaturePackages:           "requires.packages",
	FeatureServices:           "requires.services",
	FeatureMCP:                "requires.mcp",
	FeatureViews:              "views",
	FeatureSchema:             "nodes[0].schema",
	FeatureKind:               "kind",
	FeatureAgentNode:          "nodes[0].type",
}

// featureAlso is what else a feature's flow is refused for one version
// below it: a limit needs state, and both came in v0.2.
var featureAlso = map[string][]Problem{
	FeatureLimits: {{CodeFeatureTooNew, `Declaring state requires version "0.2" or later`, "state"}},
}

func load(t *testing.T, data []byte) *Flow {
	t.Helper()
	f, err := Load(data)
	if err != nil {
		t.Fatalf("Load(%s) error: %v", data, err)
	}
	return f
}

func marshal(t *testing.T, f map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestVersionsAccepted(t *testing.T) {
	t.Parallel()
	want := []string{"0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9",
		"0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16", "0.17"}
	if diff := cmp.Diff(want, Versions); diff != "" {
		t.Errorf("Versions (-want +got):\n%s", diff)
	}
	if Versions[len(Versions)-1] != LatestVersion {
		t.Errorf("LatestVersion = %q, want the last of Versions %q", LatestVersion, Versions[len(Versions)-1])
	}
	for _, v := range want {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			if ps := Validate(load(t, marshal(t, baseFlow(v)))); len(ps) != 0 {
				t.Errorf("Validate(version %q) = %v, want no problems", v, ps)
			}
		})
	}
}

func TestVersionsRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0.18", "2.0", "", "0.1.0", "0.0", "0.01", "1.0", "v0.2", " 0.2", "0.2 ", "0.9a"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			f := baseFlow(v)
			// Newer features are not refused at a version nobody can read:
			// the version is the one problem.
			f["state"] = map[string]any{"x": map[string]any{"type": "file", "remembers": true}}
			got := Validate(load(t, marshal(t, f)))
			want := []Problem{{Code: CodeUnsupportedVersion, Message: "Unsupported LGFlow version: " + v, Path: "version"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Validate(version %q) (-want +got):\n%s", v, diff)
			}
		})
	}
}

func TestVersionMissingOrNotAString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want []Problem
	}{
		{"missing", `{"start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
			[]Problem{{CodeMissingVersion, "Flow has no version", "version"}}},
		{"number", `{"version":0.2,"start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[]}`,
			[]Problem{{CodeWrongType, "version must be a string", "version"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Validate(load(t, []byte(tt.data)))); diff != "" {
				t.Errorf("Validate(%s) (-want +got):\n%s", tt.data, diff)
			}
		})
	}
}

// TestFeatures holds the table to the validator: every feature is refused,
// by name, one version below the one that introduced it, and accepted at
// that version.
func TestFeatures(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	last := 0
	for _, feat := range Features {
		if seen[feat.Key] {
			t.Errorf("Features lists %q twice", feat.Key)
		}
		seen[feat.Key] = true
		if !SupportsVersion(feat.Since) {
			t.Errorf("feature %q: Since %q is not a supported version", feat.Key, feat.Since)
			continue
		}
		if minor(feat.Since) < last {
			t.Errorf("feature %q: Features is not oldest first", feat.Key)
		}
		last = minor(feat.Since)
	}
	for key := range useFeature {
		if !seen[key] {
			t.Errorf("useFeature has %q, which Features does not", key)
		}
	}
	for _, feat := range Features {
		t.Run(feat.Key, func(t *testing.T) {
			t.Parallel()
			use, ok := useFeature[feat.Key]
			if !ok {
				t.Fatalf("no flow uses feature %q: add one to useFeature", feat.Key)
			}
			at := baseFlow(feat.Since)
			use(at)
			if ps := Validate(load(t, marshal(t, at))); len(ps) != 0 {
				t.Errorf("Validate(%q at %s) = %v, want no problems", feat.Key, feat.Since, ps)
			}
			if !Supports(feat.Since, feat.Key) {
				t.Errorf("Supports(%q, %q) = false, want true", feat.Since, feat.Key)
			}
			below := Versions[slices.Index(Versions, feat.Since)-1]
			f := baseFlow(below)
			use(f)
			want := append(slices.Clone(featureAlso[feat.Key]), Problem{
				Code:    CodeFeatureTooNew,
				Message: feat.Doing + ` requires version "` + feat.Since + `" or later`,
				Path:    featurePath[feat.Key],
			})
			if diff := cmp.Diff(want, Validate(load(t, marshal(t, f)))); diff != "" {
				t.Errorf("Validate(%q at %s) (-want +got):\n%s", feat.Key, below, diff)
			}
			if Supports(below, feat.Key) {
				t.Errorf("Supports(%q, %q) = true, want false", below, feat.Key)
			}
		})
	}
}

// TestFeatureWording pins the one refusal the DSL reference spells out.
func TestFeatureWording(t *testing.T) {
	t.Parallel()
	f := baseFlow("0.1")
	f["state"] = map[string]any{"question": map[string]any{}}
	got := Validate(load(t, marshal(t, f)))
	want := []Problem{{CodeFeatureTooNew, `Declaring state requires version "0.2" or later`, "state"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

// TestFeatureSince pins the table to the versions the DSL reference gives.
func TestFeatureSince(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		FeatureState: "0.2", FeatureLimits: "0.2", FeatureLimitPer: "0.3", FeatureLLMNode: "0.3",
		FeatureRetry: "0.3", FeatureOnError: "0.3", FeatureTools: "0.4", FeatureToolNode: "0.4",
		FeatureToolsNode: "0.4", FeatureApproval: "0.5", FeatureFanout: "0.6", FeatureDescription: "0.7",
		FeatureInputs: "0.7", FeatureOutputs: "0.7", FeatureRequires: "0.7", FeatureChannelType: "0.7",
		FeatureChannelDescription: "0.7", FeatureNodeDescription: "0.7", FeatureWhen: "0.7",
		FeatureToolDescription: "0.7", FeatureAsk: "0.8", FeatureFileChannel: "0.9", FeatureConversation: "0.9",
		FeatureRemembers: "0.9", FeaturePackages: "0.9", FeatureServices: "0.9", FeatureMCP: "0.9",
		FeatureViews: "0.11", FeatureSchema: "0.15", FeatureKind: "0.17", FeatureAgentNode: "0.17",
	}
	got := map[string]string{}
	for _, f := range Features {
		got[f.Key] = f.Since
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Features (-want +got):\n%s", diff)
	}
}
