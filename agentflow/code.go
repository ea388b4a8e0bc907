package agentflow

// The checker's codes: the reference's catalogue of compile-time
// diagnostics, less lex and syntax (the front end's). docs/agentflow.md
// says what each means and where it is reported.
const (
	CodeDuplicateWorkflow      = "duplicate-workflow"
	CodeDuplicateAlias         = "duplicate-alias"
	CodeDuplicateLimits        = "duplicate-limits"
	CodeDuplicatePipeline      = "duplicate-pipeline"
	CodeDuplicateType          = "duplicate-type"
	CodeDuplicateTypeField     = "duplicate-type-field"
	CodeRecursiveType          = "recursive-type"
	CodeUnknownTeam            = "unknown-team"
	CodeInvalidBounds          = "invalid-bounds"
	CodeExternalType           = "external-type" // info
	CodeUnknownType            = "unknown-type"
	CodeDuplicateStage         = "duplicate-stage"
	CodeUnknownStage           = "unknown-stage"
	CodeDuplicateDependency    = "duplicate-dependency"
	CodeForwardDependency      = "forward-dependency"
	CodeUndeclaredDependency   = "undeclared-dependency"
	CodeMissingPipeline        = "missing-pipeline"
	CodeMissingInput           = "missing-input"
	CodeWorkflowParamName      = "workflow-param-name"
	CodeMissingReturn          = "missing-return"
	CodePipelineReturnPosition = "pipeline-return-position"
	CodeStageMissingReturn     = "stage-missing-return"
	CodeStageReturnPosition    = "stage-return-position"
	CodeStageReturnMismatch    = "stage-return-mismatch"
	CodeWorkflowReturnMismatch = "workflow-return-mismatch"
	CodeDuplicateVariable      = "duplicate-variable"
	CodeUnknownVariable        = "unknown-variable"
	CodeHeterogeneousArray     = "heterogeneous-array"
	CodeRequireNotBool         = "require-not-bool"
	CodeIfNotBool              = "if-not-bool"
	CodeVerifyPredicateNotBool = "verify-predicate-not-bool"
	CodeDangerousMemberAccess  = "dangerous-member-access"
	CodeInvalidMemberAccess    = "invalid-member-access"
	CodeOptionalMemberAccess   = "optional-member-access"
	CodeInvalidProjection      = "invalid-projection"
	CodeUnknownBuiltin         = "unknown-builtin"
	CodeInvalidBuiltinCall     = "invalid-builtin-call"
	CodeInvalidAgentTarget     = "invalid-agent-target"
	CodeInvalidMemberArgument  = "invalid-member-argument"
	CodeAgentMissingTask       = "agent-missing-task"
	CodeAgentMissingExpect     = "agent-missing-expect"
	CodeDuplicateAgentOption   = "duplicate-agent-option"
	CodeDuplicateTool          = "duplicate-tool"
	CodeExpectInvalidType      = "expect-invalid-type"
	CodeWriteNotPathArray      = "write-not-path-array"
	CodeInvalidTimeout         = "invalid-timeout"
	CodeInvalidRetry           = "invalid-retry"
	CodeInvalidLimit           = "invalid-limit"
	CodeInvalidLimits          = "invalid-limits"
	CodeInvalidEmit            = "invalid-emit"
	CodeDuplicateBranch        = "duplicate-branch"
	CodeDuplicateCheck         = "duplicate-check"
	CodeDuplicateObjectField   = "duplicate-object-field"
	CodeOperatorType           = "operator-type"
	CodeParallelMapSourceArray = "parallel-map-source-not-array"
)

// Codes is every code of the reference's compile-time catalogue, the
// front end's two first, in the catalogue's order.
var Codes = []string{
	CodeSyntax, CodeLex,
	CodeDuplicateWorkflow, CodeDuplicateAlias, CodeDuplicateLimits, CodeDuplicatePipeline,
	CodeDuplicateType, CodeDuplicateTypeField, CodeRecursiveType, CodeUnknownTeam, CodeInvalidBounds,
	CodeExternalType, CodeUnknownType, CodeDuplicateStage, CodeUnknownStage, CodeDuplicateDependency,
	CodeForwardDependency, CodeUndeclaredDependency, CodeMissingPipeline, CodeMissingInput,
	CodeWorkflowParamName, CodeMissingReturn, CodePipelineReturnPosition, CodeStageMissingReturn,
	CodeStageReturnPosition, CodeStageReturnMismatch, CodeWorkflowReturnMismatch, CodeDuplicateVariable,
	CodeUnknownVariable, CodeHeterogeneousArray, CodeRequireNotBool, CodeIfNotBool,
	CodeVerifyPredicateNotBool, CodeDangerousMemberAccess, CodeInvalidMemberAccess,
	CodeOptionalMemberAccess, CodeInvalidProjection, CodeUnknownBuiltin, CodeInvalidBuiltinCall,
	CodeInvalidAgentTarget, CodeInvalidMemberArgument, CodeAgentMissingTask, CodeAgentMissingExpect,
	CodeDuplicateAgentOption, CodeDuplicateTool, CodeExpectInvalidType, CodeWriteNotPathArray,
	CodeInvalidTimeout, CodeInvalidRetry, CodeInvalidLimit, CodeInvalidLimits, CodeInvalidEmit,
	CodeDuplicateBranch, CodeDuplicateCheck, CodeDuplicateObjectField, CodeOperatorType,
	CodeParallelMapSourceArray,
}

// SeverityOf is the catalogue's severity of code: info for
// external-type, error for every other.
func SeverityOf(code string) Severity {
	if code == CodeExternalType {
		return SeverityInfo
	}
	return SeverityError
}
