package flow

import (
	"slices"
	"strconv"
	"strings"
)

// Versions lists every DSL version this build accepts, oldest first.
// Anything else is refused: "Unsupported LGFlow version: X".
var Versions = []string{
	"0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9",
	"0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16", "0.17",
}

// LatestVersion is the newest DSL version this build accepts.
const LatestVersion = "0.17"

// Feature is one part of the DSL and the version that introduced it. A
// flow that uses a feature below that version is refused by name, with
// Doing + ` requires version "<Since>" or later`, never silently ignored.
type Feature struct {
	// Key names the feature in this table and in docs/flow.md.
	Key string
	// Since is the version that introduced it.
	Since string
	// Doing is the feature in words, the subject of the refusal.
	Doing string
	// Where is what in a flow file uses the feature.
	Where string
}

// The feature keys.
const (
	FeatureState              = "state"
	FeatureLimits             = "limits"
	FeatureLimitPer           = "limits.per"
	FeatureLLMNode            = "llm"
	FeatureRetry              = "retry"
	FeatureOnError            = "onError"
	FeatureTools              = "tools"
	FeatureToolNode           = "tool"
	FeatureToolsNode          = "tools-node"
	FeatureApproval           = "approval"
	FeatureFanout             = "fanout"
	FeatureDescription        = "description"
	FeatureInputs             = "inputs"
	FeatureOutputs            = "outputs"
	FeatureRequires           = "requires"
	FeatureChannelType        = "channel.type"
	FeatureChannelDescription = "channel.description"
	FeatureNodeDescription    = "node.description"
	FeatureWhen               = "when"
	FeatureToolDescription    = "tool.description"
	FeatureAsk                = "ask"
	FeatureFileChannel        = "file"
	FeatureConversation       = "conversation"
	FeatureRemembers          = "remembers"
	FeaturePackages           = "packages"
	FeatureServices           = "services"
	FeatureMCP                = "mcp"
	FeatureViews              = "views"
	FeatureSchema             = "schema"
	FeatureKind               = "kind"
	FeatureAgentNode          = "agent"
)

// Features is the one table of which version introduced what, oldest
// first. It is built from the "— vX.Y" markers of the DSL reference; see
// docs/flow.md for the few entries that are decisions rather than quotes.
var Features = []Feature{
	{FeatureState, "0.2", "Declaring state", `"state"`},
	{FeatureLimits, "0.2", "Limiting a route", `"limits" on a conditional edge`},
	{FeatureLimitPer, "0.3", "Scoping a limit", `"per" in a limit`},
	{FeatureLLMNode, "0.3", "Using an llm node", `"type": "llm"`},
	{FeatureRetry, "0.3", "Retrying a node", `"retry" on a node`},
	{FeatureOnError, "0.3", "Recovering with onError", `"onError" on a node`},
	{FeatureTools, "0.4", "Declaring tools", `"tools"`},
	{FeatureToolNode, "0.4", "Using a tool node", `"type": "tool"`},
	{FeatureToolsNode, "0.4", "Using a tools node", `"type": "tools"`},
	{FeatureApproval, "0.5", "Asking for approval", `"approval" on a node`},
	{FeatureFanout, "0.6", "Using a fanout node", `"type": "fanout"`},
	{FeatureDescription, "0.7", "Describing a flow", `"description"`},
	{FeatureInputs, "0.7", "Declaring inputs", `"inputs"`},
	{FeatureOutputs, "0.7", "Declaring outputs", `"outputs"`},
	{FeatureRequires, "0.7", "Declaring requirements", `"requires" (its "env")`},
	{FeatureChannelType, "0.7", "Typing a channel", `"type" on a channel`},
	{FeatureChannelDescription, "0.7", "Describing a channel", `"description" on a channel`},
	{FeatureNodeDescription, "0.7", "Describing a node", `"description" on a node`},
	{FeatureWhen, "0.7", "Describing a route", `"when" on a conditional edge`},
	{FeatureToolDescription, "0.7", "Describing a tool", `a tool written as an object`},
	{FeatureAsk, "0.8", "Using an ask node", `"type": "ask"`},
	{FeatureFileChannel, "0.9", "Declaring a file channel", `"type": "file" or "accept" on a channel`},
	{FeatureConversation, "0.9", "Making a flow a conversation", `"conversation": true`},
	{FeatureRemembers, "0.9", "Remembering a channel", `"remembers" on a channel`},
	{FeaturePackages, "0.9", "Declaring packages", `"packages" in requires`},
	{FeatureServices, "0.9", "Declaring services", `"services" in requires`},
	{FeatureMCP, "0.9", "Declaring MCP servers", `"mcp" in requires`},
	{FeatureViews, "0.11", "Declaring views", `"views"`},
	{FeatureSchema, "0.15", "Giving an llm node a schema", `"schema" on an llm node`},
	{FeatureKind, "0.17", "Declaring a flow's kind", `"kind"`},
	// The agent node is this build's own: the DSL reference has no marker
	// for it, and 0.17 is the newest version this build accepts, so no
	// engine that reads an older version is ever handed one.
	{FeatureAgentNode, "0.17", "Using an agent node", `"type": "agent"`},
}

// FeatureByKey returns the feature with the given key.
func FeatureByKey(key string) (Feature, bool) {
	i := slices.IndexFunc(Features, func(f Feature) bool { return f.Key == key })
	if i < 0 {
		return Feature{}, false
	}
	return Features[i], true
}

// SupportsVersion reports whether this build accepts version v, exactly as
// written.
func SupportsVersion(v string) bool {
	return slices.Contains(Versions, v)
}

// Supports reports whether a flow at version v may use the feature. It is
// false for a version this build does not accept and for an unknown key.
func Supports(v, key string) bool {
	f, ok := FeatureByKey(key)
	if !ok || !SupportsVersion(v) {
		return false
	}
	return versionLess(f.Since, v) || f.Since == v
}

// versionLess orders two accepted versions ("0.9" < "0.10").
func versionLess(a, b string) bool {
	return minor(a) < minor(b)
}

// minor returns N of an accepted version "0.N".
func minor(v string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(v, "0."))
	if err != nil {
		panic("flow: minor of unsupported version " + strconv.Quote(v))
	}
	return n
}

// unsupportedVersion is the refusal of a version this build does not
// accept, X as given.
func unsupportedVersion(v string) string {
	return "Unsupported LGFlow version: " + v
}

// tooNew is the refusal of a feature used below its version.
func tooNew(f Feature) string {
	return f.Doing + ` requires version "` + f.Since + `" or later`
}
