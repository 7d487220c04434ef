package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// The experience system (seed 001): captured turns, feedback signals and
// task experiences. Heuristics, skills and recall have their own files
// (experience_heuristic.go, experience_skill.go, experience_recall.go).

func init() {
	register(captureCommand)
	register(signalsCommand)
	register(experienceCommand)
}

// captureFieldFlags set a field of the captured turn; they cannot be
// combined with --input.
var captureFieldFlags = []string{"bead-id", "role", "turn-id", "source", "time"}

func captureCommand(a *app) *cobra.Command {
	var (
		in    kaizen.CaptureInput
		turn  kaizen.TurnInput
		input string
	)
	cmd := &cobra.Command{
		Use:   "capture --task ID [--role ROLE] [--turn-id X] [--source S] [TEXT… | - | --input FILE|-]",
		Short: "Capture a turn of a task's conversation (the material of signals, experiences and memories)",
		Long: `Capture one turn of a task's conversation: the text given as arguments
(joined by spaces), or standard input when the text is -. Secrets are
redacted before storage. User and assistant turns of at least 12
characters become recallable memories.

To capture several turns at once, give a JSON object with the fields
bead_id, source and turns (each {role, content, turn_id, time}) with
--input FILE, or --input - for standard input.`,
		Example: `  kaizen capture --task bd-42 "Add rate limiting to the login endpoint"
  kaizen capture --task bd-42 --role assistant --turn-id t1 "Added a token bucket in middleware.go"
  git diff | kaizen capture --task bd-42 --role tool -
  kaizen capture --input turns.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if input != "" {
				if name := firstChanged(f, captureFieldFlags); name != "" {
					return usageError{fmt.Errorf("--%s cannot be combined with --input: put the field in the JSON object", name)}
				}
				if len(args) > 0 {
					return usageError{fmt.Errorf("give the text as arguments or --input, not both")}
				}
				var err error
				in, err = readJSONInput(a, input, func(r io.Reader) (kaizen.CaptureInput, error) {
					var v kaizen.CaptureInput
					return v, kaizen.DecodeStrict(r, &v, "parse capture")
				})
				if err != nil {
					return err
				}
			} else {
				text, err := turnText(a, args)
				if err != nil {
					return err
				}
				turn.Content = text
				in.Turns = []kaizen.TurnInput{turn}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.Capture(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Captured %d turn(s) of task %s (project %s)", res.Stored, res.TaskID, res.Project)
				if res.Duplicates > 0 {
					fmt.Fprintf(w, ", %d already captured", res.Duplicates)
				}
				if res.Redacted > 0 {
					fmt.Fprintf(w, ", %d secret(s) redacted", res.Redacted)
				}
				_, err := fmt.Fprintln(w)
				return err
			})
		},
	}
	f := cmd.Flags()
	beadIDFlag(cmd, &in.TaskID, "the task (bead) the turn belongs to (required)")
	f.StringVar(&turn.Role, "role", "user", "who wrote the turn: user, assistant, tool or system")
	f.StringVar(&turn.TurnID, "turn-id", "", "the client's id of the exchange; capturing the same turn twice then stores it once")
	f.StringVar(&turn.Time, "time", "", "when the turn happened, RFC 3339 (default now)")
	f.StringVar(&in.Source, "source", "cli", "the reporting client")
	f.StringVar(&input, "input", "", "read a JSON object {bead_id, source, turns: [...]} from FILE, or - for standard input")
	return cmd
}

// turnText is the text of a captured turn: the arguments joined by spaces,
// or standard input for a single "-".
func turnText(a *app, args []string) (string, error) {
	switch {
	case len(args) == 0:
		return "", usageError{fmt.Errorf("no text to capture: give it as arguments, - to read standard input, or --input FILE with a JSON object")}
	case len(args) == 1 && args[0] == "-":
		data, err := io.ReadAll(io.LimitReader(a.stdin, kaizen.MaxInputBytes+1))
		if err != nil {
			return "", usageError{fmt.Errorf("cannot read standard input: %w", err)}
		}
		if len(data) > kaizen.MaxInputBytes {
			return "", usageError{fmt.Errorf("standard input is larger than %d bytes", kaizen.MaxInputBytes)}
		}
		return string(data), nil
	}
	return strings.Join(args, " "), nil
}

func signalsCommand(a *app) *cobra.Command {
	return group("signals", "Find and list the feedback signals of captured conversations",
		signalsListCommand(a), signalsExtractCommand(a))
}

func joinSignalTypes() string {
	s := make([]string, len(experience.SignalTypes))
	for i, t := range experience.SignalTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func signalsListCommand(a *app) *cobra.Command {
	var q kaizen.SignalQuery
	cmd := &cobra.Command{
		Use:     "list [--task ID] [--type TYPE]",
		Short:   "List stored feedback signals, oldest first",
		Example: "  kaizen signals list --task bd-42 --type correction",
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "signals", "ID\tBEAD_ID\tTYPE\tSOURCE\tCONFIDENCE\tEXTRACTOR\tTURN\tEVIDENCE",
			func(ctx context.Context, e *kaizen.Engine) (listed[experience.FeedbackSignal], error) {
				l, err := e.ListSignals(ctx, q)
				if err != nil {
					return listed[experience.FeedbackSignal]{}, err
				}
				return listed[experience.FeedbackSignal]{l, l.Items, l.Total}, nil
			}, signalRow),
	}
	beadIDFlag(cmd, &q.TaskID, "only signals of this task")
	cmd.Flags().StringVar(&q.Type, "type", "", "only signals of this type ("+joinSignalTypes()+")")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func signalRow(s experience.FeedbackSignal) string {
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s", s.ID, s.TaskID, s.Type, s.Source, s.Confidence,
		s.Extractor, orDash(s.TurnID), clip(oneLine(s.Evidence), 80))
}

func signalsExtractCommand(a *app) *cobra.Command {
	var in kaizen.SignalsInput
	cmd := &cobra.Command{
		Use:   "extract --task ID [--extractor auto|rules|llm]",
		Short: "Find the feedback signals of a task's captured conversation",
		Long: `Find the feedback signals (reject, correction, constraint, success,
confusion, preference) of a task's captured turns and store them, replacing
the task's earlier signals by the same extractor. auto (the default) uses
the chat model when one is configured, else the bilingual rules.`,
		Example: "  kaizen signals extract --task bd-42 --extractor rules",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ExtractSignals(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Found %d signal(s) in task %s by %s (%d model call(s), %d earlier replaced)\n",
					len(res.Signals), res.TaskID, res.Extractor, res.Calls, res.Replaced)
				return printSignals(w, res.Signals)
			})
		},
	}
	beadIDFlag(cmd, &in.TaskID, "the task (bead) (required)")
	cmd.Flags().StringVar(&in.Extractor, "extractor", "auto", "auto, rules or llm")
	return cmd
}

// printSignals prints signals as an indented table (nothing when empty).
func printSignals(w io.Writer, sigs []experience.FeedbackSignal) error {
	if len(sigs) == 0 {
		return nil
	}
	t := table(w)
	fmt.Fprintln(t, "  TYPE\tSOURCE\tCONFIDENCE\tTURN\tEVIDENCE")
	for _, s := range sigs {
		fmt.Fprintf(t, "  %s\t%s\t%.2f\t%s\t%s\n", s.Type, s.Source, s.Confidence, orDash(s.TurnID), clip(oneLine(s.Evidence), 80))
	}
	return t.Flush()
}

func experienceCommand(a *app) *cobra.Command {
	return group("experience", "Extract, inspect and submit what finished tasks teach",
		experienceExtractCommand(a), experienceShowCommand(a), experienceListCommand(a),
		experienceRequestCommand(a), experienceSubmitCommand(a))
}

func experienceExtractCommand(a *app) *cobra.Command {
	var in kaizen.ExperienceInput
	cmd := &cobra.Command{
		Use:   "extract --task ID [--mode minimal|balanced|full]",
		Short: "Extract a task's experience (goal, failed attempts, working approach, heuristics)",
		Long: `Extract what a finished task teaches from its captured turns: goal,
success criteria, failed attempts, the working approach and transferable
heuristics, which are merged into the project's heuristics. Extraction is
cached per task: asking again shows the stored experience.

Without a chat model (or in minimal mode) only rule-based feedback signals
are found; the agent can then extract the experience itself:
'kaizen experience request', then 'kaizen experience submit'.`,
		Example: "  kaizen experience extract --task bd-42 --mode balanced",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ExtractExperience(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printExperienceResult(w, res) })
		},
	}
	beadIDFlag(cmd, &in.TaskID, "the task (bead) (required)")
	cmd.Flags().StringVar(&in.Mode, "mode", "", "minimal (no model call), balanced (1) or full (2); default experience.mode")
	return cmd
}

func printExperienceResult(w io.Writer, res *kaizen.ExperienceResult) error {
	switch {
	case res.Cached:
		fmt.Fprintf(w, "Task %s: experience already extracted (cached, no model call)\n", res.TaskID)
	case res.Experience != nil:
		fmt.Fprintf(w, "Extracted the experience of task %s (mode %s, %d model call(s))\n", res.TaskID, res.Mode, res.Calls)
	default:
		fmt.Fprintf(w, "Task %s: no experience extracted (mode %s, %d model call(s))\n", res.TaskID, res.Mode, res.Calls)
	}
	if res.Message != "" {
		fmt.Fprintf(w, "%s\n", res.Message)
	}
	if res.Experience == nil {
		fmt.Fprintf(w, "Let the agent extract it: kaizen experience request --task %s, then kaizen experience submit --task %s --input answer.json\n",
			res.TaskID, res.TaskID)
	}
	if res.Experience != nil {
		fmt.Fprintln(w)
		if err := printExperience(w, res.Experience); err != nil {
			return err
		}
	} else if len(res.Signals) > 0 {
		fmt.Fprintf(w, "\nSignals (%d):\n", len(res.Signals))
		if err := printSignals(w, res.Signals); err != nil {
			return err
		}
	}
	return printHeuristicChanges(w, res.Heuristics)
}

// printHeuristicChanges prints what lessons did to the heuristic store.
func printHeuristicChanges(w io.Writer, changes []kaizen.HeuristicChange) error {
	if len(changes) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nHeuristics:")
	t := table(w)
	fmt.Fprintln(t, "  ACTION\tHEURISTIC\tSIMILARITY\tSTATUS\tRULE")
	for _, c := range changes {
		status := string(c.Status)
		if c.Transition != nil {
			status = string(c.Transition.From) + " → " + string(c.Transition.To)
		}
		fmt.Fprintf(t, "  %s\t%s\t%.2f\t%s\t%s\n", c.Action, c.HeuristicID, c.Similarity, status, clip(oneLine(c.Rule), 80))
	}
	return t.Flush()
}

// printExperience prints a task experience.
func printExperience(w io.Writer, x *experience.TaskExperience) error {
	t := table(w)
	fmt.Fprintf(t, "bead_id:\t%s\n", x.TaskID)
	fmt.Fprintf(t, "project:\t%s\n", x.Project)
	fmt.Fprintf(t, "goal:\t%s\n", oneLine(x.Goal))
	fmt.Fprintf(t, "mode:\t%s (extractor %s, %d model call(s))\n", x.Mode, x.Extractor, x.Calls)
	optional(t, "working_approach", oneLine(x.WorkingApproach))
	fmt.Fprintf(t, "created_at:\t%s\n", x.CreatedAt.UTC().Format(time.RFC3339))
	if err := t.Flush(); err != nil {
		return err
	}
	if len(x.SuccessCriteria) > 0 {
		fmt.Fprintln(w, "\nSuccess criteria:")
		for _, c := range x.SuccessCriteria {
			fmt.Fprintf(w, "  - %s\n", oneLine(c))
		}
	}
	if len(x.FailedAttempts) > 0 {
		fmt.Fprintln(w, "\nFailed attempts:")
		for _, f := range x.FailedAttempts {
			fmt.Fprintf(w, "  - %s: %s\n    failed: %s\n", oneLine(f.Label), oneLine(f.Approach), oneLine(f.FailureReason))
			if f.ReplacedBy != "" {
				fmt.Fprintf(w, "    replaced by: %s\n", oneLine(f.ReplacedBy))
			}
		}
	}
	if len(x.Heuristics) > 0 {
		fmt.Fprintln(w, "\nTransferable heuristics:")
		for _, h := range x.Heuristics {
			fmt.Fprintf(w, "  - [%s] when %s: %s\n", h.Kind, oneLine(h.Trigger), oneLine(h.Rule))
			if h.Why != "" {
				fmt.Fprintf(w, "    why: %s\n", oneLine(h.Why))
			}
		}
	}
	if len(x.Signals) > 0 {
		fmt.Fprintf(w, "\nSignals (%d):\n", len(x.Signals))
		return printSignals(w, x.Signals)
	}
	return nil
}

func experienceShowCommand(a *app) *cobra.Command {
	var taskID string
	cmd := &cobra.Command{
		Use:     "show --task ID",
		Short:   "Show a task's extracted experience",
		Example: "  kaizen experience show --task bd-42",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			x, err := e.GetExperience(cmd.Context(), "", taskID)
			if err != nil {
				return err
			}
			return a.print(x, func(w io.Writer) error { return printExperience(w, x) })
		},
	}
	beadIDFlag(cmd, &taskID, "the task (bead) (required)")
	return cmd
}

func experienceListCommand(a *app) *cobra.Command {
	var q kaizen.ExperienceQuery
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List extracted task experiences, newest first",
		Example: "  kaizen experience list --limit 10",
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "experiences", "BEAD_ID\tMODE\tEXTRACTOR\tATTEMPTS\tHEURISTICS\tSIGNALS\tCREATED\tGOAL",
			func(ctx context.Context, e *kaizen.Engine) (listed[experience.TaskExperience], error) {
				l, err := e.ListExperiences(ctx, q)
				if err != nil {
					return listed[experience.TaskExperience]{}, err
				}
				return listed[experience.TaskExperience]{l, l.Items, l.Total}, nil
			}, func(x experience.TaskExperience) string {
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s", x.TaskID, x.Mode, x.Extractor, len(x.FailedAttempts),
					len(x.Heuristics), len(x.Signals), x.CreatedAt.UTC().Format(time.RFC3339), clip(oneLine(x.Goal), 60))
			}),
	}
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func experienceRequestCommand(a *app) *cobra.Command {
	var in kaizen.ExtractionRequestInput
	cmd := &cobra.Command{
		Use:   "request --task ID [--kind experience|signals|skill] [--skill NAME] [--mode M]",
		Short: "Print the extraction task for an agent: instructions, JSON schema and transcript",
		Long: `Print what an agent needs to extract a task's experience (with inline
signals), its signals, or a skill from its experience, itself: the
instructions, the JSON schema of the answer, and the material (the
transcript, or for a skill the experience and heuristics). Give the JSON
answer back with 'kaizen experience submit'. This is the flow to use
when kaizen has no chat model.`,
		Example: `  kaizen experience request --task bd-42
  kaizen experience request --task bd-42 --kind skill --skill rate-limiting`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			task, err := e.ExtractionRequest(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(task, func(w io.Writer) error {
				mode := ""
				if task.Kind != "skill" && task.Mode != "" {
					mode = " (mode " + string(task.Mode) + ")"
				}
				fmt.Fprintf(w, "# Extraction task: %s of task %s%s\n\n", task.Kind, task.TaskID, mode)
				instructions := strings.TrimSpace(task.Instructions)
				fmt.Fprintf(w, "## Instructions\n\n%s\n\n", instructions)
				// The instructions usually embed the schema already.
				if schema := strings.TrimSpace(string(task.Schema)); schema != "" && !strings.Contains(instructions, schema) {
					fmt.Fprintf(w, "## JSON schema of the answer\n\n%s\n\n", schema)
				}
				fmt.Fprintf(w, "## Material\n\n%s\n\n", strings.TrimSpace(task.Transcript))
				_, err := fmt.Fprintf(w, "## Submit\n\nkaizen experience submit --task %s --kind %s%s --input answer.json\n",
					task.TaskID, task.Kind, skillArg(in.Skill))
				return err
			})
		},
	}
	beadIDFlag(cmd, &in.TaskID, "the task (bead) (required)")
	f := cmd.Flags()
	f.StringVar(&in.Kind, "kind", "experience", "experience, signals or skill")
	f.StringVar(&in.Skill, "skill", "", "the skill to upgrade (kind skill); default: a new skill")
	f.StringVar(&in.Mode, "mode", "", "the mode recorded on the experience (minimal, balanced or full)")
	return cmd
}

func skillArg(s string) string {
	if s == "" {
		return ""
	}
	return " --skill " + s
}

func experienceSubmitCommand(a *app) *cobra.Command {
	var (
		in    kaizen.ExtractionSubmitInput
		input string
	)
	cmd := &cobra.Command{
		Use:   "submit --task ID [--kind experience|signals|skill] [--skill NAME] --input FILE|-",
		Short: "Submit what an agent extracted (the JSON answer to 'experience request')",
		Long: `Validate and store what an agent extracted: the JSON object the schema of
'kaizen experience request' describes, read from FILE or standard input
(-). An experience's heuristics are merged into the project's heuristics;
a skill is written as a draft.`,
		Example: `  kaizen experience submit --task bd-42 --input answer.json
  kaizen experience submit --task bd-42 --kind skill --input - < skill.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" {
				return usageError{fmt.Errorf("--input is required: the JSON answer, from FILE or - for standard input")}
			}
			raw, err := readRawJSON(a, input)
			if err != nil {
				return err
			}
			in.Result = raw
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.SubmitExtraction(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				switch {
				case res.Signals != nil:
					s := res.Signals
					fmt.Fprintf(w, "Stored %d signal(s) of task %s (%d earlier replaced)\n", len(s.Signals), s.TaskID, s.Replaced)
					return printSignals(w, s.Signals)
				case res.Experience != nil:
					return printExperienceResult(w, res.Experience)
				case res.Skill != nil:
					return printSkillResult(w, res.Skill)
				}
				_, err := fmt.Fprintf(w, "Submitted (%s)\n", res.Kind)
				return err
			})
		},
	}
	beadIDFlag(cmd, &in.TaskID, "the task (bead) (required)")
	f := cmd.Flags()
	f.StringVar(&in.Kind, "kind", "experience", "experience, signals or skill")
	f.StringVar(&in.Skill, "skill", "", "the skill to upgrade (kind skill)")
	f.StringVar(&input, "input", "", "the JSON answer: FILE, or - for standard input (required)")
	return cmd
}

// readRawJSON reads a JSON document (up to kaizen.MaxInputBytes) from the
// file named by path or standard input; the engine validates its content.
func readRawJSON(a *app, path string) (json.RawMessage, error) {
	r, closeFn, err := openInput(a, path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	data, err := io.ReadAll(io.LimitReader(r, kaizen.MaxInputBytes+1))
	if err != nil {
		return nil, usageError{fmt.Errorf("cannot read input: %w", err)}
	}
	if len(data) > kaizen.MaxInputBytes {
		return nil, usageError{fmt.Errorf("input is larger than %d bytes", kaizen.MaxInputBytes)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, usageError{fmt.Errorf("input is empty: give the JSON object the request's schema describes")}
	}
	return json.RawMessage(data), nil
}

// writeFileAtomic writes what fill writes into a temporary file beside
// path and renames it into place, so a failure leaves no partial file.
func writeFileAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return usageError{fmt.Errorf("cannot write %s: %w", path, err)}
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
