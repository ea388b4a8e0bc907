package agentflow

// Node is a node of the syntax tree: it spans its source from Pos up to
// End (exclusive), from its first token to its last.
type Node interface {
	Pos() Position
	End() Position
}

// Span is where a node is; every node embeds one.
type Span struct{ From, To Position }

// Pos is where the node starts.
func (s Span) Pos() Position { return s.From }

// End is just past the node's last byte.
func (s Span) End() Position { return s.To }

// File is a parsed .af file, from its first byte to its end: its
// workflows, and its comments in source order (the parser skips them; the
// formatter puts them back).
type File struct {
	Span
	Workflows []*Workflow
	Comments  []*Comment
}

// Comment is a line (//) or block (/* */) comment, Text as written.
type Comment struct {
	Span
	Text string
}

// Ident is a name as spelled in the source. As an expression it is a
// reference to a variable.
type Ident struct {
	Span
	Name string
}

// Workflow is workflow NAME(PARAM: T, context: T) -> T { members }.
type Workflow struct {
	Span
	Name    *Ident
	Param   *Param
	Context *Param // nil without a context parameter; its Name is "context"
	Output  *TypeRef
	Members []Member
}

// Param is NAME: TYPE.
type Param struct {
	Span
	Name *Ident
	Type *TypeRef
}

// TypeRef is a type: NAME or member<TEAM>, then suffixes: T[] T[1..5][].
type TypeRef struct {
	Span
	Member   bool   // member<Name>
	Name     *Ident // the type's name, or the team's for member<T>
	Suffixes []*TypeSuffix
}

// TypeSuffix is [] or [MIN..MAX].
type TypeSuffix struct {
	Span
	Min, Max *NumberLit // both nil for []
}

// Member is what a workflow holds: *Use, *Limits, *TypeDecl or *Pipeline.
type Member interface {
	Node
	member()
}

// Use is use agent|team "RESOURCE" as ALIAS.
type Use struct {
	Span
	Kind     string // "agent" or "team"
	Resource *StringLit
	Alias    *Ident
}

// Limits is limits { name: value, ... }.
type Limits struct {
	Span
	Fields []*LimitField
}

// LimitField is concurrency|agent_runs|duration: NUMBER|DURATION.
type LimitField struct {
	Span
	Name  *Ident
	Value Expr // *NumberLit or *DurationLit
}

// TypeDecl is type NAME { field?: T, ... }.
type TypeDecl struct {
	Span
	Name   *Ident
	Fields []*TypeField
}

// TypeField is NAME: T or NAME?: T.
type TypeField struct {
	Span
	Name     *Ident
	Optional bool
	Type     *TypeRef
}

// Pipeline is pipeline NAME? { statements }.
type Pipeline struct {
	Span
	Name *Ident // nil when unnamed
	Body []Stmt
}

func (*Use) member()      {}
func (*Limits) member()   {}
func (*TypeDecl) member() {}
func (*Pipeline) member() {}

// Stmt is a statement: *Stage (in a pipeline only), *Let, *Require,
// *Emit, *Return or *If.
type Stmt interface {
	Node
	stmt()
}

// Stage is stage NAME after A, B -> T { statements }.
type Stage struct {
	Span
	Name   *Ident
	After  []*Ident
	Result *TypeRef
	Body   []Stmt
}

// Let is let NAME = VALUE.
type Let struct {
	Span
	Name  *Ident
	Value Expr
}

// Require is require COND else fail "MESSAGE".
type Require struct {
	Span
	Cond    Expr
	Message *StringLit
}

// Emit is emit progress { ... }.
type Emit struct {
	Span
	Payload *ObjectLit
}

// Return is return VALUE.
type Return struct {
	Span
	Value Expr
}

// If is if COND { then } else { else }.
type If struct {
	Span
	Cond Expr
	Then []Stmt
	Else []Stmt // nil without else
}

func (*Stage) stmt()   {}
func (*Let) stmt()     {}
func (*Require) stmt() {}
func (*Emit) stmt()    {}
func (*Return) stmt()  {}
func (*If) stmt()      {}

// Expr is an expression: *Ident (a variable), a literal, *ParenExpr,
// *UnaryExpr, *BinaryExpr, *RangeExpr, *MemberExpr, *ProjectionExpr,
// *CallExpr, *AgentExpr, *ParallelExpr, *ParallelMapExpr or *VerifyExpr.
type Expr interface {
	Node
	expr()
}

// StringLit is "..." or """...""": Value after escapes or trimming, Raw
// as written.
type StringLit struct {
	Span
	Value     string
	Raw       string
	Multiline bool
}

// NumberLit is a number: 12, 1.5.
type NumberLit struct {
	Span
	Value float64
	Raw   string
}

// DurationLit is 500ms 5s 10m 2h, Millis its value in milliseconds.
type DurationLit struct {
	Span
	Millis int64
	Raw    string
}

// BoolLit is true or false.
type BoolLit struct {
	Span
	Value bool
}

// NullLit is null.
type NullLit struct {
	Span
}

// ArrayLit is [a, b].
type ArrayLit struct {
	Span
	Elems []Expr
}

// ObjectLit is { a, b: e }.
type ObjectLit struct {
	Span
	Fields []*ObjectField
}

// ObjectField is NAME: VALUE, or NAME alone (shorthand: Value is nil).
type ObjectField struct {
	Span
	Name  *Ident
	Value Expr
}

// ParenExpr is ( X ).
type ParenExpr struct {
	Span
	X Expr
}

// UnaryExpr is not X.
type UnaryExpr struct {
	Span
	Op string // "not"
	X  Expr
}

// BinaryExpr is X OP Y: ?? or and == != < <= > >= in. For in, Y is a
// *RangeExpr.
type BinaryExpr struct {
	Span
	Op    string
	OpPos Position
	X, Y  Expr
}

// RangeExpr is LO..HI, the right operand of in.
type RangeExpr struct {
	Span
	Lo, Hi Expr
}

// MemberExpr is X.NAME.
type MemberExpr struct {
	Span
	X    Expr
	Name *Ident
}

// ProjectionExpr is X[*].
type ProjectionExpr struct {
	Span
	X Expr
}

// CallExpr is FUN(ARGS).
type CallExpr struct {
	Span
	Fun  Expr
	Args []Expr
}

// AgentExpr is agent(TARGET) { options }.
type AgentExpr struct {
	Span
	Target  Expr
	Options []AgentOption
}

// ParallelExpr is parallel { name = value, ... }.
type ParallelExpr struct {
	Span
	Branches []*Branch
}

// Branch is NAME = VALUE in parallel { }.
type Branch struct {
	Span
	Name  *Ident
	Value Expr
}

// ParallelMapExpr is parallel map SOURCE as ITEM limit N { BODY }.
type ParallelMapExpr struct {
	Span
	Source Expr
	Item   *Ident
	Limit  *NumberLit // nil without limit
	Body   Expr
}

// VerifyExpr is verify { checks pass when COND }.
type VerifyExpr struct {
	Span
	Checks []VerifyCheck
	Cond   Expr
}

// VerifyCheck is *Check or *CheckGroup.
type VerifyCheck interface {
	Node
	verifyCheck()
}

// Check is check NAME = VALUE.
type Check struct {
	Span
	Name  *Ident
	Value Expr
}

// CheckGroup is parallel { check ... check ... }.
type CheckGroup struct {
	Span
	Checks []*Check
}

func (*Check) verifyCheck()      {}
func (*CheckGroup) verifyCheck() {}

func (*Ident) expr()           {}
func (*StringLit) expr()       {}
func (*NumberLit) expr()       {}
func (*DurationLit) expr()     {}
func (*BoolLit) expr()         {}
func (*NullLit) expr()         {}
func (*ArrayLit) expr()        {}
func (*ObjectLit) expr()       {}
func (*ParenExpr) expr()       {}
func (*UnaryExpr) expr()       {}
func (*BinaryExpr) expr()      {}
func (*RangeExpr) expr()       {}
func (*MemberExpr) expr()      {}
func (*ProjectionExpr) expr()  {}
func (*CallExpr) expr()        {}
func (*AgentExpr) expr()       {}
func (*ParallelExpr) expr()    {}
func (*ParallelMapExpr) expr() {}
func (*VerifyExpr) expr()      {}

// AgentOption is an option of agent(): *TaskOption, *InputOption,
// *ToolsOption, *WriteOption, *ExpectOption, *TimeoutOption or
// *RetryOption.
type AgentOption interface {
	Node
	agentOption()
}

// TaskOption is task "..." or task """...""".
type TaskOption struct {
	Span
	Task *StringLit
}

// InputOption is input { ... }.
type InputOption struct {
	Span
	Payload *ObjectLit
}

// ToolsOption is tools none or tools [a, b].
type ToolsOption struct {
	Span
	None  bool
	Names []*Ident
}

// WriteOption is write PATHS.
type WriteOption struct {
	Span
	Paths Expr
}

// ExpectOption is expect T.
type ExpectOption struct {
	Span
	Type *TypeRef
}

// TimeoutOption is timeout DURATION.
type TimeoutOption struct {
	Span
	Timeout *DurationLit
}

// RetryOption is retry { attempts: N, on: [codes] }.
type RetryOption struct {
	Span
	Attempts *NumberLit
	On       []*Ident // nil without on: (the checker's default is transient)
}

func (*TaskOption) agentOption()    {}
func (*InputOption) agentOption()   {}
func (*ToolsOption) agentOption()   {}
func (*WriteOption) agentOption()   {}
func (*ExpectOption) agentOption()  {}
func (*TimeoutOption) agentOption() {}
func (*RetryOption) agentOption()   {}
