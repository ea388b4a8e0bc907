// Package agentflow is the front end of the Agent Flow language (.af
// files): the lexer (Lex), the parser (Parse) with its syntax tree, the
// formatter (Format) and the checker (CheckFile) with its types
// (ResolveType, Type.JSONSchema), and the interpreter (Run) that runs a
// checked workflow, asking a caller's Model for its agent() calls. It follows the language reference's
// lexis, grammar and static rules exactly and reports what does not follow
// them as Diagnostics with a position and the code of the reference's
// catalogue. docs/agentflow.md says what is accepted, what each code
// means and how a file is laid out.
package agentflow
