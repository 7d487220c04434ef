package team

import (
	"fmt"
	"slices"
	"strings"
)

// childRules lists which patterns a run of each pattern may start as a child,
// and why (the seed's composition rules):
//
//   - nesting: CP-6 runs CP-2 inside each increment (and CP-1 may hand its
//     validation to CP-2);
//   - escalation: CP-2, CP-6 and CP-1 escalate to CP-5 or CP-7 when blocked;
//     CP-7 escalates to CP-5 (level L3) after its rounds; CP-3's conflicts
//     and CP-8's design conflicts go to CP-4;
//   - degradation and fall-back: CP-9 degrades to CP-1; CP-5 and CP-2 fall
//     back to CP-1 on a design flaw; a blocked CP-9 track starts CP-7.
//
// CP-10 is never a child: it runs last, for the team (CheckPostMortem).
var childRules = map[PatternID][]PatternID{
	CP1:  {CP2, CP5, CP7},
	CP2:  {CP1, CP5, CP7},
	CP3:  {CP4},
	CP4:  nil,
	CP5:  {CP1},
	CP6:  {CP2, CP5, CP7},
	CP7:  {CP5},
	CP8:  {CP4},
	CP9:  {CP1, CP2, CP7},
	CP10: nil,
}

// AllowedChildren returns the patterns a run of p may start.
func AllowedChildren(p PatternID) []PatternID { return slices.Clone(childRules[p]) }

// CheckChild says whether a run of parent may start a run of child.
func CheckChild(parent, child PatternID) error {
	if !parent.Valid() || !child.Valid() {
		return fmt.Errorf("%w: %q → %q", ErrUnknownPattern, parent, child)
	}
	if !slices.Contains(childRules[parent], child) {
		return fmt.Errorf("%w: %s (%s) may not start %s (%s)", ErrComposition, parent, parent.Name(), child, child.Name())
	}
	return nil
}

// ActiveRun is what the composition checks need to know of a running run.
type ActiveRun struct {
	ID      string    `json:"id"`
	Pattern PatternID `json:"pattern"`
	Team    string    `json:"team"`
}

// CheckSwarmExclusive enforces "CP-7 is not re-entrant": a new CP-7 run may
// not start while another CP-7 run of the same team is active. The storage
// enforces it across daemons (a unique partial index or a row lock) and
// calls this predicate inside the transaction that starts the run.
func CheckSwarmExclusive(p PatternID, team string, active []ActiveRun) error {
	if p != CP7 {
		return nil
	}
	for _, a := range active {
		if a.Pattern == CP7 && a.Team == team {
			return fmt.Errorf("%w: run %s of team %s; wait for it to finish or join it", ErrSwarmActive, a.ID, team)
		}
	}
	return nil
}

// CheckPostMortem enforces "CP-10 always last": a post-mortem starts only
// when every task of the team is terminal (completed, failed or cancelled).
// Tasks are those of the team; an empty team graph is allowed.
func CheckPostMortem(tasks []Task) error {
	var open []string
	for _, t := range tasks {
		if !t.Status.Terminal() {
			open = append(open, t.ID+" ("+string(t.Status)+")")
		}
	}
	if len(open) > 0 {
		if len(open) > 5 {
			open = append(open[:5], fmt.Sprintf("and %d more", len(open)-5))
		}
		return fmt.Errorf("%w: CP-10 runs after the team's tasks ended; still open: %s", ErrComposition, strings.Join(open, ", "))
	}
	return nil
}

// CheckStart runs every composition check for starting a run of p at the
// top level or as a child of parent ("" for none): the nesting rule, the
// swarm exclusion and, for CP-10, the terminal-tasks rule.
func CheckStart(p PatternID, parent PatternID, team string, active []ActiveRun, tasks []Task) error {
	if !p.Valid() {
		return fmt.Errorf("%w: %q", ErrUnknownPattern, p)
	}
	if parent != "" {
		if err := CheckChild(parent, p); err != nil {
			return err
		}
	}
	if err := CheckSwarmExclusive(p, team, active); err != nil {
		return err
	}
	if p == CP10 {
		return CheckPostMortem(tasks)
	}
	return nil
}

// StepMode says how a composition step relates to the previous one.
type StepMode string

// Step modes.
const (
	// ModeThen: the step starts after the previous one finished ("→").
	ModeThen StepMode = "then"
	// ModeWith: the step runs alongside or inside the previous one ("+").
	ModeWith StepMode = "with"
)

// CompositionStep is one pattern of a composition.
type CompositionStep struct {
	Pattern PatternID `json:"pattern"`
	Mode    StepMode  `json:"mode"`
	Purpose string    `json:"purpose"`
}

// Composition is a named combination of patterns from the seed.
type Composition struct {
	Name  string            `json:"name"`
	Title string            `json:"title"`
	Steps []CompositionStep `json:"steps"`
}

// Compositions returns the seed's five named compositions.
func Compositions() []Composition {
	return []Composition{
		{Name: "standard", Title: "Standard Development", Steps: []CompositionStep{
			{CP1, ModeThen, "pipeline"}, {CP2, ModeWith, "review-fix in validation"}, {CP10, ModeThen, "post-mortem"}}},
		{Name: "high-risk", Title: "High-Risk Feature", Steps: []CompositionStep{
			{CP4, ModeThen, "consensus on design"}, {CP6, ModeThen, "incremental delivery"}, {CP2, ModeWith, "review-fix each increment"}}},
		{Name: "investigation", Title: "Complex Investigation", Steps: []CompositionStep{
			{CP3, ModeThen, "fan-out analysis"}, {CP4, ModeThen, "consensus on diagnosis"}, {CP7, ModeThen, "swarm if needed"}}},
		{Name: "parallel", Title: "Parallel Development", Steps: []CompositionStep{
			{CP9, ModeThen, "dual-track"}, {CP2, ModeWith, "review-fix per track"}, {CP10, ModeThen, "post-mortem"}}},
		{Name: "expert", Title: "Expert-Guided Development", Steps: []CompositionStep{
			{CP8, ModeThen, "consulting for design"}, {CP1, ModeThen, "pipeline implementation"}, {CP2, ModeWith, "review-fix"}}},
	}
}

// CompositionByName returns a named composition.
func CompositionByName(name string) (Composition, bool) {
	for _, c := range Compositions() {
		if c.Name == name {
			return c, true
		}
	}
	return Composition{}, false
}
