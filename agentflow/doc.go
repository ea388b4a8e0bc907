// Package agentflow is the front end of the Agent Flow language (.af
// files): the lexer (Lex), the parser (Parse) with its syntax tree, and
// the formatter (Format). It follows the language reference's lexis and
// grammar exactly and reports what does not follow them as Diagnostics
// with a position; types, scopes and the reference's catalogue of
// semantic diagnostics belong to the checker, which reads this package's
// tree. docs/agentflow.md says what is accepted and how a file is laid
// out.
package agentflow
