package flow

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a flow: Code is stable and one of the
// Code… constants, Message is for a person, and Path names the thing at
// fault (nodes[2].schema.properties.amount, edges[0].routes.done), so that
// an editor can show it where it belongs. Path is empty for the flow as a
// whole.
type Problem struct {
	Code    string
	Message string
	Path    string
}

// String renders the problem on one line: path, code and message.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Code + ": " + p.Message
	}
	return p.Path + ": " + p.Code + ": " + p.Message
}

// The codes a Problem can carry, in one place so a caller switching on them
// cannot invent one. docs/flow.md says when each is raised. A code, once
// published, is never renamed or reused for something else.
const (
	// Shape: what Load found while reading the JSON.
	CodeWrongType  = "WRONG_TYPE"  // a value of the wrong JSON type
	CodeUnknownKey = "UNKNOWN_KEY" // a key the DSL does not define, refused by name

	// Versions.
	CodeMissingVersion     = "MISSING_VERSION"
	CodeUnsupportedVersion = "UNSUPPORTED_VERSION" // Unsupported LGFlow version: X
	CodeFeatureTooNew      = "FEATURE_TOO_NEW"     // <feature> requires version "X" or later

	// The flow as a whole.
	CodeMissingStart = "MISSING_START"
	CodeUnknownStart = "UNKNOWN_START"
	CodeMissingNodes = "MISSING_NODES"
	CodeMissingEdges = "MISSING_EDGES"
	CodeMissingField = "MISSING_FIELD" // a required field, named in the message, is absent or empty
	CodeInvalidValue = "INVALID_VALUE" // a value of the right type that the DSL does not allow

	// Nodes.
	CodeMissingNodeID      = "MISSING_NODE_ID"
	CodeDuplicateNodeID    = "DUPLICATE_NODE_ID"
	CodeReservedNodeID     = "RESERVED_NODE_ID"
	CodeMissingHandler     = "MISSING_HANDLER"  // neither handler nor type
	CodeHandlerAndType     = "HANDLER_AND_TYPE" // both handler and type
	CodeUnknownNodeType    = "UNKNOWN_NODE_TYPE"
	CodeMisplacedKey       = "MISPLACED_KEY"    // a DSL key on a node or edge of a kind it does not belong to
	CodeUnknownNodeRef     = "UNKNOWN_NODE_REF" // onError, onReject, a fanout's to or a limit's per names no node
	CodeUnreachableNode    = "UNREACHABLE_NODE"
	CodeFanoutHasEdges     = "FANOUT_HAS_EDGES"
	CodeFanoutNeedsReducer = "FANOUT_NEEDS_REDUCER"

	// Edges.
	CodeMissingEdgeFrom       = "MISSING_EDGE_FROM"
	CodeMissingEdgeTo         = "MISSING_EDGE_TO"
	CodeUnknownEdgeSource     = "UNKNOWN_EDGE_SOURCE"
	CodeUnknownEdgeTarget     = "UNKNOWN_EDGE_TARGET" // also a route's destination
	CodeReservedEdgeEnd       = "RESERVED_EDGE_END"   // an edge from START or END, or to START
	CodeMissingEdgeType       = "MISSING_EDGE_TYPE"   // router/routes/when/limits without type
	CodeUnknownEdgeType       = "UNKNOWN_EDGE_TYPE"
	CodeMissingRouter         = "MISSING_ROUTER"
	CodeMissingRoutes         = "MISSING_ROUTES"
	CodeConditionalEdgeWithTo = "CONDITIONAL_EDGE_WITH_TO"
	CodeUnknownRoute          = "UNKNOWN_ROUTE" // when, limits or then names no route of the edge
	CodeLimitsNeedState       = "LIMITS_NEED_STATE"

	// Channels and tools.
	CodeUndeclaredChannel  = "UNDECLARED_CHANNEL"
	CodeReservedChannel    = "RESERVED_CHANNEL"
	CodeUnknownChannelType = "UNKNOWN_CHANNEL_TYPE"
	CodeUndeclaredTool     = "UNDECLARED_TOOL"
	CodeUndeclaredMCPTool  = "UNDECLARED_MCP_TOOL"
	CodeDuplicateTool      = "DUPLICATE_TOOL"
	CodeInvalidMCPServer   = "INVALID_MCP_SERVER"

	// Structured output schemas.
	CodeSchemaUnknownKeyword   = "SCHEMA_UNKNOWN_KEYWORD"
	CodeSchemaMissingType      = "SCHEMA_MISSING_TYPE"
	CodeSchemaUnknownType      = "SCHEMA_UNKNOWN_TYPE"
	CodeSchemaListWithoutItems = "SCHEMA_LIST_WITHOUT_ITEMS"
	CodeSchemaMisplacedKeyword = "SCHEMA_MISPLACED_KEYWORD"
	CodeSchemaUnknownRequired  = "SCHEMA_UNKNOWN_REQUIRED"
	CodeSchemaInvalid          = "SCHEMA_INVALID"
	CodeSchemaChannelMismatch  = "SCHEMA_CHANNEL_MISMATCH"
)

// Codes lists every code a Problem can carry.
var Codes = []string{
	CodeWrongType, CodeUnknownKey,
	CodeMissingVersion, CodeUnsupportedVersion, CodeFeatureTooNew,
	CodeMissingStart, CodeUnknownStart, CodeMissingNodes, CodeMissingEdges, CodeMissingField, CodeInvalidValue,
	CodeMissingNodeID, CodeDuplicateNodeID, CodeReservedNodeID, CodeMissingHandler, CodeHandlerAndType,
	CodeUnknownNodeType, CodeMisplacedKey, CodeUnknownNodeRef, CodeUnreachableNode, CodeFanoutHasEdges,
	CodeFanoutNeedsReducer,
	CodeMissingEdgeFrom, CodeMissingEdgeTo, CodeUnknownEdgeSource, CodeUnknownEdgeTarget, CodeReservedEdgeEnd,
	CodeMissingEdgeType, CodeUnknownEdgeType, CodeMissingRouter, CodeMissingRoutes, CodeConditionalEdgeWithTo,
	CodeUnknownRoute, CodeLimitsNeedState,
	CodeUndeclaredChannel, CodeReservedChannel, CodeUnknownChannelType, CodeUndeclaredTool, CodeUndeclaredMCPTool,
	CodeDuplicateTool, CodeInvalidMCPServer,
	CodeSchemaUnknownKeyword, CodeSchemaMissingType, CodeSchemaUnknownType, CodeSchemaListWithoutItems,
	CodeSchemaMisplacedKeyword, CodeSchemaUnknownRequired, CodeSchemaInvalid, CodeSchemaChannelMismatch,
}

// ValidationError is what Check returns for a flow with problems: all of
// them, in the order Validate found them.
type ValidationError struct {
	Problems []Problem
}

// Error says the first problem and how many more there are.
func (e *ValidationError) Error() string {
	switch len(e.Problems) {
	case 0:
		return "flow: invalid flow"
	case 1:
		return "flow: " + e.Problems[0].String()
	}
	return fmt.Sprintf("flow: %s (and %d more)", e.Problems[0], len(e.Problems)-1)
}

// Format renders every problem, one a line.
func (e *ValidationError) Format() string {
	var b strings.Builder
	for _, p := range e.Problems {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Check is Validate as an error: nil for a valid flow, otherwise a
// *ValidationError holding every problem.
func Check(f *Flow) error {
	if ps := Validate(f); len(ps) > 0 {
		return &ValidationError{Problems: ps}
	}
	return nil
}
