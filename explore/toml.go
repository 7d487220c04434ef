package explore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/BurntSushi/toml"
)

// The TOML schema of a strategy (see docs/explore.md and the built-in files in
// strategies/). Conditions are strings in the condition syntax; an absent
// rule condition ("when") means true, an absent transition or final_when
// condition means never.
type tomlStrategy struct {
	Name           string            `toml:"name"`
	Description    string            `toml:"description"`
	Pipeline       string            `toml:"pipeline"`
	Reflection     bool              `toml:"reflection"`
	Planning       bool              `toml:"planning"`
	ExitOnTerminal bool              `toml:"exit_on_terminal"`
	SubmitTool     *string           `toml:"submit_tool"`
	Summary        string            `toml:"summary"`
	Nudges         NudgePolicy       `toml:"nudges"`
	Texts          map[string]string `toml:"texts"`
	Tools          map[string]string `toml:"tools"`
	Phase          []tomlPhase       `toml:"phase"`
	Transition     []tomlTransition  `toml:"transition"`
}

type tomlPhase struct {
	Name       string       `toml:"name"`
	Label      string       `toml:"label"`
	ToolChoice string       `toml:"tool_choice"`
	Tools      []string     `toml:"tools"`
	Enter      string       `toml:"enter"`
	FinalWhen  string       `toml:"final_when"`
	Mute       []string     `toml:"mute"`
	Choice     []tomlChoice `toml:"choice"`
	Context    []tomlText   `toml:"context"`
	OnText     []tomlText   `toml:"on_text"`
}

type tomlChoice struct {
	When string `toml:"when"`
	Mode string `toml:"mode"`
}

type tomlText struct {
	When string `toml:"when"`
	Text string `toml:"text"`
}

type tomlTransition struct {
	From      string `toml:"from"`
	To        string `toml:"to"`
	OnMetrics string `toml:"on_metrics"`
	OnText    string `toml:"on_text"`
}

// DefaultSubmitTool is the submit tool named in texts when a strategy file
// does not set submit_tool.
const DefaultSubmitTool = "submit_knowledge"

// maxTOMLSize bounds strategy and budget files.
const maxTOMLSize = 1 << 20

// LoadStrategyTOML parses and validates a strategy in TOML. Unknown keys are
// errors (they are usually typos). Errors are *StrategyError wrapping
// ErrInvalidTOML, ErrUnknownKey, ErrBadCondition, ErrUnknownPhase…
func LoadStrategyTOML(data []byte) (Strategy, error) {
	if len(data) > maxTOMLSize {
		return Strategy{}, &StrategyError{Err: fmt.Errorf("%w: larger than %d bytes", ErrInvalidTOML, maxTOMLSize)}
	}
	raw := tomlStrategy{Nudges: DefaultNudgePolicy()}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw)
	if err != nil {
		return Strategy{}, &StrategyError{Strategy: raw.Name, Err: tomlError(err)}
	}
	if und := md.Undecoded(); len(und) > 0 {
		return Strategy{}, &StrategyError{Strategy: raw.Name, Field: und[0].String(), Err: ErrUnknownKey}
	}
	s, err := raw.strategy()
	if err != nil {
		return Strategy{}, err
	}
	if err := s.Validate(); err != nil {
		return Strategy{}, err
	}
	return s, nil
}

// ReadStrategyTOML is LoadStrategyTOML reading from r.
func ReadStrategyTOML(r io.Reader) (Strategy, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxTOMLSize+1))
	if err != nil {
		return Strategy{}, &StrategyError{Err: fmt.Errorf("%w: %v", ErrInvalidTOML, err)}
	}
	return LoadStrategyTOML(data)
}

// LoadBudgetTOML parses a budget: top-level keys named like the Budget JSON
// fields (max_iterations, search_budget…); absent keys keep DefaultBudget.
// Errors are *BudgetError, or errors wrapping ErrInvalidTOML / ErrUnknownKey.
func LoadBudgetTOML(data []byte) (Budget, error) {
	if len(data) > maxTOMLSize {
		return Budget{}, fmt.Errorf("budget: %w: larger than %d bytes", ErrInvalidTOML, maxTOMLSize)
	}
	b := DefaultBudget()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&b)
	if err != nil {
		return Budget{}, fmt.Errorf("budget: %w", tomlError(err))
	}
	if und := md.Undecoded(); len(und) > 0 {
		return Budget{}, fmt.Errorf("budget: %w: %s", ErrUnknownKey, und[0])
	}
	if err := b.Validate(); err != nil {
		return Budget{}, err
	}
	return b, nil
}

func tomlError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: line %d: %s", ErrInvalidTOML, pe.Position.Line, pe.Message)
	}
	return fmt.Errorf("%w: %v", ErrInvalidTOML, err)
}

func (raw *tomlStrategy) strategy() (Strategy, error) {
	s := Strategy{
		Name:           raw.Name,
		Description:    raw.Description,
		Pipeline:       raw.Pipeline,
		Reflection:     raw.Reflection,
		Planning:       raw.Planning,
		ExitOnTerminal: raw.ExitOnTerminal,
		SubmitTool:     DefaultSubmitTool,
		Summary:        strings.TrimSpace(raw.Summary),
		Nudges:         raw.Nudges,
		Texts:          raw.Texts,
	}
	if raw.SubmitTool != nil {
		s.SubmitTool = *raw.SubmitTool
	}
	fail := func(field string, err error) error { return &StrategyError{Strategy: raw.Name, Field: field, Err: err} }
	cond := func(field, text string, absent Condition) (Condition, error) {
		if strings.TrimSpace(text) == "" {
			return absent, nil
		}
		c, err := ParseCondition(text)
		if err != nil {
			return Condition{}, fail(field, err)
		}
		return c, nil
	}
	if len(raw.Tools) > 0 {
		s.Tools = make(map[string]ToolKind, len(raw.Tools))
		for name, kind := range raw.Tools {
			s.Tools[strings.ToLower(name)] = ToolKind(kind)
		}
	}
	for i, rp := range raw.Phase {
		field := fmt.Sprintf("phase[%d]", i)
		if rp.Name != "" {
			field = "phase[" + rp.Name + "]"
		}
		p := Phase{
			Name:       rp.Name,
			Label:      rp.Label,
			ToolChoice: ChoiceMode(rp.ToolChoice),
			Tools:      rp.Tools,
			Enter:      strings.TrimSpace(rp.Enter),
		}
		if p.Label == "" {
			p.Label = strings.ToLower(p.Name)
		}
		if p.ToolChoice == "" {
			p.ToolChoice = ChoiceAuto
		}
		var err error
		if p.FinalWhen, err = cond(field+".final_when", rp.FinalWhen, Condition{}); err != nil {
			return Strategy{}, err
		}
		for _, m := range rp.Mute {
			p.Mute = append(p.Mute, NudgeKind(m))
		}
		for j, rc := range rp.Choice {
			when, err := cond(fmt.Sprintf("%s.choice[%d].when", field, j), rc.When, True)
			if err != nil {
				return Strategy{}, err
			}
			p.Choices = append(p.Choices, ChoiceRule{When: when, Mode: ChoiceMode(rc.Mode)})
		}
		for _, list := range []struct {
			name string
			in   []tomlText
			out  *[]TextRule
		}{{"context", rp.Context, &p.Context}, {"on_text", rp.OnText, &p.OnText}} {
			for j, rt := range list.in {
				when, err := cond(fmt.Sprintf("%s.%s[%d].when", field, list.name, j), rt.When, True)
				if err != nil {
					return Strategy{}, err
				}
				*list.out = append(*list.out, TextRule{When: when, Text: strings.TrimSpace(rt.Text)})
			}
		}
		s.Phases = append(s.Phases, p)
	}
	for i, rt := range raw.Transition {
		field := fmt.Sprintf("transition[%d]", i)
		onMetrics, err := cond(field+".on_metrics", rt.OnMetrics, Condition{})
		if err != nil {
			return Strategy{}, err
		}
		onText, err := cond(field+".on_text", rt.OnText, Condition{})
		if err != nil {
			return Strategy{}, err
		}
		s.Transitions = append(s.Transitions, Transition{From: rt.From, To: rt.To, OnMetrics: onMetrics, OnText: onText})
	}
	return s, nil
}
