package board

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
)

// The capabilities of runs (docs/runs.md): an agent announcing "runs" may
// send run_summary, one announcing "live-runs" may send run_event, and one
// announcing "fire" is sent fire and stop.
const (
	capRuns     = "runs"
	capLiveRuns = "live-runs"
	capFire     = "fire"
)

// Limits on what a run event or summary may carry (docs/limits.md). A
// value past a limit that can be cut (an error) is cut; a value too large
// to keep (input, output) is withheld; anything else refuses the message.
const (
	maxRunID        = 64
	maxRunThread    = 256
	maxRunNode      = 256
	maxRunKind      = 64
	maxStartedBy    = 64
	maxStartedByWho = 320
	maxRunError     = 1024
	maxRunValues    = 64 << 10
	maxRunSteps     = 1000
	maxWithheld     = 8
	maxWithheldName = 32
	// maxClockAhead is how far ahead of the board's clock an agent's time
	// may be; a time further ahead is refused.
	maxClockAhead = time.Hour
)

// runIDShape is the shape of a run's id.
var runIDShape = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Run states as the store keeps them.
const (
	runRunning  = "running"
	runPaused   = "paused"
	runFinished = "finished"
	runFailed   = "failed"
	runStopped  = "stopped"
)

// validRunID checks a run's id: 1 to 64 bytes of letters, digits, '.', '_'
// and '-'.
func validRunID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("required")
	case len(id) > maxRunID:
		return fmt.Errorf("%d bytes, at most %d", len(id), maxRunID)
	case !runIDShape.MatchString(id):
		return fmt.Errorf("want letters, digits, '.', '_' and '-'")
	}
	return nil
}

// cutText is at most max bytes of s, cut on a character boundary, saying
// it was cut.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = " … (cut by the board)"
	n := max - len(mark)
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + mark
}

// validRunTime checks a time an agent reports: set, valid, and not far
// ahead of now.
func validRunTime(t *timestamppb.Timestamp, now time.Time) error {
	switch {
	case t == nil:
		return fmt.Errorf("required")
	case !t.IsValid():
		return fmt.Errorf("not a valid time")
	case t.AsTime().After(now.Add(maxClockAhead)):
		return fmt.Errorf("%s is more than %s ahead of the board's clock", t.AsTime().UTC().Format(time.RFC3339), maxClockAhead)
	case t.AsTime().Year() < 2000:
		return fmt.Errorf("before the year 2000")
	}
	return nil
}

// stepField names a step in an error: at, or at[i] when i is 0 or more.
// It is formatted only when a step is refused, so checking the steps of
// a fleet's summaries builds no names.
type stepField struct {
	at string
	i  int
}

func (f stepField) String() string {
	if f.i < 0 {
		return f.at
	}
	return f.at + "[" + strconv.Itoa(f.i) + "]"
}

// validStep checks one step, naming the field under at, and cuts its
// error.
func validStep(at stepField, st *boardv1.RunStep) error {
	if st.GetSeq() < 1 {
		return badRequest("%s.seq: %d, want 1 or more", at, st.GetSeq())
	}
	if err := validText(st.GetNode(), maxRunNode, false); err != nil {
		return badRequest("%s.node: %v", at, err)
	}
	if err := validText(st.GetKind(), maxRunKind, false); err != nil {
		return badRequest("%s.kind: %v", at, err)
	}
	if st.GetCopy() < -1 {
		return badRequest("%s.copy: %d, want -1 or more", at, st.GetCopy())
	}
	if d := st.GetDuration(); d != nil && (!d.IsValid() || d.AsDuration() < 0) {
		return badRequest("%s.duration: want a duration of 0 or more", at)
	}
	if t := st.GetStartTime(); t != nil && !t.IsValid() {
		return badRequest("%s.start_time: not a valid time", at)
	}
	if err := validTokens(st.GetTokens()); err != nil {
		return badRequest("%s.tokens: %v", at, err)
	}
	if err := validText(st.GetApprovalId(), maxApprovalIDLen, false); err != nil {
		return badRequest("%s.approval_id: %v", at, err)
	}
	if unknownEnum(st.GetOutcome()) {
		return badRequest("%s.outcome: unknown value %d", at, st.GetOutcome().Number())
	}
	if unknownEnum(st.GetPause()) {
		return badRequest("%s.pause: unknown value %d", at, st.GetPause().Number())
	}
	st.Error = cutText(st.GetError(), maxRunError)
	return nil
}

// linkEnum refuses, on the link, an enum value the enum does not have.
func linkEnum(field string, v protoreflect.Enum) error {
	if unknownEnum(v) {
		return badRequest("%s: unknown value %d", field, v.Number())
	}
	return nil
}

// unknownEnum reports whether v is a value its enum does not have.
func unknownEnum(v protoreflect.Enum) bool {
	return v.Number() != 0 && v.Descriptor().Values().ByNumber(v.Number()) == nil
}

func validTokens(t *boardv1.Tokens) error {
	if t.GetInput() < 0 || t.GetOutput() < 0 || t.GetCached() < 0 || t.GetTotal() < 0 {
		return fmt.Errorf("must not be negative")
	}
	return nil
}

// validSummary checks a run summary, naming the field at fault, and makes
// it fit what the board keeps: its error cut to 1 KiB, its steps to 1,000
// (steps_truncated), an input or output past 64 KiB withheld.
func validSummary(m *boardv1.RunSummary, now time.Time) error {
	if m.GetSeq() == 0 {
		return badRequest("run_summary.seq: required, 1 or more")
	}
	r := m.GetRun()
	if r == nil {
		return badRequest("run_summary.run: required")
	}
	if err := validRunID(r.GetId()); err != nil {
		return badRequest("run_summary.run.id: %v", err)
	}
	switch r.GetState() {
	case boardv1.RunState_RUN_STATE_PAUSED, boardv1.RunState_RUN_STATE_FINISHED,
		boardv1.RunState_RUN_STATE_FAILED, boardv1.RunState_RUN_STATE_STOPPED:
	default:
		return badRequest("run_summary.run.state: %s, want paused, finished, failed or stopped", enumName(r.GetState()))
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{
		{"thread", r.GetThread(), maxRunThread},
		{"started_by", r.GetStartedBy(), maxStartedBy},
		{"started_by_who", r.GetStartedByWho(), maxStartedByWho},
		{"paused_at", r.GetPausedAt(), maxRunNode},
		{"approval_id", r.GetApprovalId(), maxApprovalIDLen},
	} {
		if err := validText(f.v, f.max, false); err != nil {
			return badRequest("run_summary.run.%s: %v", f.name, err)
		}
	}
	if b := r.GetBuild(); b != "" && !buildShape.MatchString(b) {
		return badRequest("run_summary.run.build: want sha256: and 64 lower-case hex digits")
	}
	if err := validRunTime(r.GetStartTime(), now); err != nil {
		return badRequest("run_summary.run.start_time: %v", err)
	}
	if t := r.GetEndTime(); t != nil {
		if err := validRunTime(t, now); err != nil {
			return badRequest("run_summary.run.end_time: %v", err)
		}
		if t.AsTime().Before(r.GetStartTime().AsTime()) {
			return badRequest("run_summary.run.end_time: before its start_time")
		}
	}
	if d := r.GetDuration(); d != nil && (!d.IsValid() || d.AsDuration() < 0) {
		return badRequest("run_summary.run.duration: want a duration of 0 or more")
	}
	if r.GetStepCount() < 0 {
		return badRequest("run_summary.run.step_count: %d, must not be negative", r.GetStepCount())
	}
	if err := validTokens(r.GetTokens()); err != nil {
		return badRequest("run_summary.run.tokens: %v", err)
	}
	if err := linkEnum("run_summary.run.pause", r.GetPause()); err != nil {
		return err
	}
	if t := r.GetTrigger(); t != nil {
		if err := validRunTrigger("run_summary.run.trigger", t, now); err != nil {
			return err
		}
	}
	if d := r.GetDelegation(); d != nil {
		if err := validRunDelegation("run_summary.run.delegation", r.GetId(), d); err != nil {
			return err
		}
	}
	if err := validSummaryFailures(r, now); err != nil {
		return err
	}
	if n := len(r.GetWithheld()); n > maxWithheld {
		return badRequest("run_summary.run.withheld: %d, at most %d", n, maxWithheld)
	}
	for i, w := range r.GetWithheld() {
		if err := validText(w, maxWithheldName, true); err != nil {
			return badRequest("run_summary.run.withheld[%d]: %v", i, err)
		}
	}
	r.Error = cutText(r.GetError(), maxRunError)
	if len(r.GetSteps()) > maxRunSteps {
		r.Steps = r.Steps[:maxRunSteps]
		r.StepsTruncated = true
	}
	for i, st := range r.GetSteps() {
		if err := validStep(stepField{"run_summary.run.steps", i}, st); err != nil {
			return err
		}
	}
	if valuesTooLarge(r.GetInput()) {
		r.Input = nil
		r.Withheld = withhold(r.Withheld, "input")
	}
	if valuesTooLarge(r.GetOutput()) {
		r.Output = nil
		r.Withheld = withhold(r.Withheld, "output")
	}
	return nil
}

// valuesTooLarge reports whether v is more than the board keeps of a run's
// input or output, as JSON.
func valuesTooLarge(v *structpb.Struct) bool {
	return v != nil && len(valuesJSON(v)) > maxRunValues
}

func withhold(w []string, name string) []string {
	if slices.Contains(w, name) {
		return w
	}
	return append(w, name)
}

// valuesJSON is v as the store keeps it; nil for none.
func valuesJSON(v *structpb.Struct) []byte {
	if v == nil {
		return nil
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// valuesStruct reads what valuesJSON wrote.
func valuesStruct(b []byte) *structpb.Struct {
	if len(b) == 0 {
		return nil
	}
	var s structpb.Struct
	if err := protojson.Unmarshal(b, &s); err != nil {
		return nil
	}
	return &s
}

// runStateWord is a run state as the store keeps it.
func runStateWord(s boardv1.RunState) string {
	switch s {
	case boardv1.RunState_RUN_STATE_RUNNING:
		return runRunning
	case boardv1.RunState_RUN_STATE_PAUSED:
		return runPaused
	case boardv1.RunState_RUN_STATE_FINISHED:
		return runFinished
	case boardv1.RunState_RUN_STATE_FAILED:
		return runFailed
	case boardv1.RunState_RUN_STATE_STOPPED:
		return runStopped
	}
	return ""
}

func runStateProto(s string) boardv1.RunState {
	switch s {
	case runRunning:
		return boardv1.RunState_RUN_STATE_RUNNING
	case runPaused:
		return boardv1.RunState_RUN_STATE_PAUSED
	case runFinished:
		return boardv1.RunState_RUN_STATE_FINISHED
	case runFailed:
		return boardv1.RunState_RUN_STATE_FAILED
	case runStopped:
		return boardv1.RunState_RUN_STATE_STOPPED
	}
	return boardv1.RunState_RUN_STATE_UNSPECIFIED
}

// ended reports whether a run in state s has ended.
func ended(s boardv1.RunState) bool {
	return s == boardv1.RunState_RUN_STATE_FINISHED || s == boardv1.RunState_RUN_STATE_FAILED || s == boardv1.RunState_RUN_STATE_STOPPED
}

func pauseKindWord(k boardv1.PauseKind) string {
	switch k {
	case boardv1.PauseKind_PAUSE_KIND_ASK:
		return "ask"
	case boardv1.PauseKind_PAUSE_KIND_APPROVAL:
		return "approval"
	}
	return ""
}

func pauseKindProto(s string) boardv1.PauseKind {
	switch s {
	case "ask":
		return boardv1.PauseKind_PAUSE_KIND_ASK
	case "approval":
		return boardv1.PauseKind_PAUSE_KIND_APPROVAL
	}
	return boardv1.PauseKind_PAUSE_KIND_UNSPECIFIED
}

// outcomeProto reads a step outcome as RunStep rows of an older board
// keep it.
func outcomeProto(s string) boardv1.StepOutcome {
	switch s {
	case "ok":
		return boardv1.StepOutcome_STEP_OUTCOME_OK
	case "failed":
		return boardv1.StepOutcome_STEP_OUTCOME_FAILED
	case "paused":
		return boardv1.StepOutcome_STEP_OUTCOME_PAUSED
	case "stopped":
		return boardv1.StepOutcome_STEP_OUTCOME_STOPPED
	}
	return boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED
}

// runProto is the API's view of a stored run, without its steps.
func runProto(r *ent.Run) *boardv1.Run {
	p := &boardv1.Run{
		Id:             r.RunID,
		Agent:          r.Agent,
		Thread:         r.Thread,
		StartedBy:      r.StartedBy,
		StartedByWho:   r.StartedByWho,
		Build:          r.Build,
		State:          runStateProto(r.State),
		StartTime:      timestamppb.New(r.StartTime),
		StepCount:      int32(r.StepCount),
		Error:          r.Error,
		Pause:          pauseKindProto(r.Pause),
		PausedAt:       r.PausedAt,
		ApprovalId:     r.ApprovalID,
		Input:          valuesStruct(r.Input),
		Output:         valuesStruct(r.Output),
		Withheld:       r.Withheld,
		StepsTruncated: r.StepsTruncated,
		Trigger:        runTriggerProto(r.Trigger),
		Delegation:     runDelegationProto(r),
	}
	if r.DurationNs > 0 {
		p.Duration = durationpb.New(time.Duration(r.DurationNs))
	}
	if r.EndTime != nil {
		p.EndTime = timestamppb.New(*r.EndTime)
	}
	if r.TokensInput|r.TokensOutput|r.TokensCached|r.TokensTotal != 0 {
		p.Tokens = &boardv1.Tokens{Input: r.TokensInput, Output: r.TokensOutput, Cached: r.TokensCached, Total: r.TokensTotal}
	}
	return p
}

// runStepProto is the API's view of a stored step.
func runStepProto(s *ent.RunStep) *boardv1.RunStep {
	p := &boardv1.RunStep{
		Seq:        int32(s.Seq),
		Node:       s.Node,
		Kind:       s.Kind,
		Copy:       int32(s.Copy),
		Outcome:    outcomeProto(s.Outcome),
		Error:      s.Error,
		Pause:      pauseKindProto(s.Pause),
		ApprovalId: s.ApprovalID,
	}
	if s.StartTime != nil {
		p.StartTime = timestamppb.New(*s.StartTime)
	}
	if s.DurationNs >= 0 {
		p.Duration = durationpb.New(time.Duration(s.DurationNs))
	}
	if s.TokensInput|s.TokensOutput|s.TokensCached|s.TokensTotal != 0 {
		p.Tokens = &boardv1.Tokens{Input: s.TokensInput, Output: s.TokensOutput, Cached: s.TokensCached, Total: s.TokensTotal}
	}
	return p
}

// storedTime is t as the store keeps times: UTC, to the microsecond.
func storedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// flowInput is one of an agent's declared inputs as the store keeps it.
type flowInput struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// Limits on a hello's inputs (docs/limits.md).
const (
	maxInputs           = 64
	maxInputName        = 64
	maxInputDescription = 1024
)

var inputNameShape = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// inputTypes are the types an input may declare.
var inputTypes = []string{"", "string", "number", "boolean", "object", "list"}

// validInputs checks a hello's inputs, naming the field at fault.
func validInputs(in []*boardv1.FlowInput) error {
	if n := len(in); n > maxInputs {
		return fmt.Errorf("inputs: %d, at most %d", n, maxInputs)
	}
	seen := make(map[string]bool, len(in))
	for i, f := range in {
		name := f.GetName()
		switch {
		case name == "":
			return fmt.Errorf("inputs[%d].name: required", i)
		case len(name) > maxInputName:
			return fmt.Errorf("inputs[%d].name: %d bytes, at most %d", i, len(name), maxInputName)
		case !inputNameShape.MatchString(name):
			return fmt.Errorf("inputs[%d].name: %s: want a letter or '_', then letters, digits, '_', '.' and '-'", i, quoted(name))
		case seen[name]:
			return fmt.Errorf("inputs[%d].name: %q twice", i, name)
		}
		seen[name] = true
		if !slices.Contains(inputTypes, f.GetType()) {
			return fmt.Errorf("inputs[%d].type: %s, want string, number, boolean, object, list or empty", i, quoted(f.GetType()))
		}
		if d := f.GetDescription(); len(d) > maxInputDescription || !utf8.ValidString(d) {
			return fmt.Errorf("inputs[%d].description: want at most %d bytes of UTF-8", i, maxInputDescription)
		}
	}
	return nil
}

// inputsJSON is a hello's inputs as the store keeps them.
func inputsJSON(in []*boardv1.FlowInput) []byte {
	out := make([]flowInput, len(in))
	for i, f := range in {
		out[i] = flowInput{Name: f.GetName(), Type: f.GetType(), Description: f.GetDescription()}
	}
	b, _ := json.Marshal(out)
	return b
}

// inputsOf reads what inputsJSON wrote.
func inputsOf(b []byte) []flowInput {
	var out []flowInput
	_ = json.Unmarshal(b, &out)
	return out
}

// inputsProto is an agent's stored inputs as the API shows them.
func inputsProto(b []byte) []*boardv1.FlowInput {
	in := inputsOf(b)
	if len(in) == 0 {
		return nil
	}
	out := make([]*boardv1.FlowInput, len(in))
	for i, f := range in {
		out[i] = &boardv1.FlowInput{Name: f.Name, Type: f.Type, Description: f.Description}
	}
	return out
}
