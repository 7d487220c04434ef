package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Skills: verified, reusable ways of doing something (SKILL.md documents
// with versions), written from task experiences; draft → active → archived.

func init() { register(skillCommand) }

func skillCommand(a *app) *cobra.Command {
	return group("skill", "Write, inspect, activate and share skills (SKILL.md documents)",
		skillListCommand(a), skillShowCommand(a), skillGenerateCommand(a),
		skillStatusCommand(a, "activate", string(experience.SkillActive), "Activate a skill: only active skills are recalled"),
		skillStatusCommand(a, "archive", string(experience.SkillArchived), "Archive a skill: it is no longer recalled"),
		skillExportCommand(a), skillImportCommand(a))
}

func skillListCommand(a *app) *cobra.Command {
	var q kaizen.SkillQuery
	cmd := &cobra.Command{
		Use:     "list [--status S] [--search Q]",
		Short:   "List skills by name",
		Example: "  kaizen skill list --status active",
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "skills", "NAME\tID\tSTATUS\tVERSION\tHEURISTICS\tUPDATED\tDESCRIPTION",
			func(ctx context.Context, e *kaizen.Engine) (listed[experience.Skill], error) {
				l, err := e.ListSkills(ctx, q)
				if err != nil {
					return listed[experience.Skill]{}, err
				}
				return listed[experience.Skill]{l, l.Items, l.Total}, nil
			}, func(s experience.Skill) string {
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%s\t%s", s.Name, s.ID, s.Status, s.Version, len(s.HeuristicIDs),
					s.UpdatedAt.UTC().Format(time.RFC3339), clip(oneLine(s.Description), 70))
			}),
	}
	f := cmd.Flags()
	f.StringVar(&q.Status, "status", "", "only skills in this state (draft, active, archived)")
	f.StringVar(&q.Search, "search", "", "only skills whose text contains this")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func skillShowCommand(a *app) *cobra.Command {
	var content bool
	cmd := &cobra.Command{
		Use:   "show NAME|ID [--content]",
		Short: "Show a skill: versions, adopted heuristics and its SKILL.md path",
		Example: `  kaizen skill show rate-limiting
  kaizen skill show rate-limiting --content > SKILL.md`,
		Args: exactArgs(1, "one skill name or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			d, err := e.GetSkill(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(d, func(w io.Writer) error {
				if content {
					text := d.Skill.Content
					if !strings.HasSuffix(text, "\n") {
						text += "\n"
					}
					_, err := io.WriteString(w, text)
					return err
				}
				return printSkillDetail(w, d)
			})
		},
	}
	cmd.Flags().BoolVar(&content, "content", false, "print the SKILL.md document only")
	return cmd
}

func printSkill(w io.Writer, s experience.Skill, path string) error {
	t := table(w)
	fmt.Fprintf(t, "name:\t%s\n", s.Name)
	fmt.Fprintf(t, "id:\t%s\n", s.ID)
	fmt.Fprintf(t, "project:\t%s\n", s.Project)
	fmt.Fprintf(t, "status:\t%s\n", s.Status)
	fmt.Fprintf(t, "version:\t%d\n", s.Version)
	fmt.Fprintf(t, "description:\t%s\n", oneLine(s.Description))
	fmt.Fprintf(t, "when_to_use:\t%s\n", oneLine(s.WhenToUse))
	optional(t, "source_task", s.SourceTaskID)
	optional(t, "path", path)
	fmt.Fprintf(t, "updated_at:\t%s\n", s.UpdatedAt.UTC().Format(time.RFC3339))
	if err := t.Flush(); err != nil {
		return err
	}
	if len(s.Steps) > 0 {
		fmt.Fprintln(w, "\nSteps:")
		for i, st := range s.Steps {
			fmt.Fprintf(w, "  %d. %s\n", i+1, oneLine(st))
		}
	}
	return nil
}

func printSkillDetail(w io.Writer, d *kaizen.SkillDetail) error {
	if err := printSkill(w, d.Skill, d.Path); err != nil {
		return err
	}
	if len(d.Versions) > 0 {
		fmt.Fprintf(w, "\nVersions (%d):\n", len(d.Versions))
		t := table(w)
		fmt.Fprintln(t, "  VERSION\tSOURCE_TASK\tCREATED\tCHANGELOG")
		for _, v := range d.Versions {
			fmt.Fprintf(t, "  %d\t%s\t%s\t%s\n", v.Version, orDash(v.SourceTaskID), v.CreatedAt.UTC().Format(time.RFC3339),
				clip(oneLine(v.Changelog), 70))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(d.Heuristics) > 0 {
		fmt.Fprintf(w, "\nHeuristics (%d):\n", len(d.Heuristics))
		t := table(w)
		fmt.Fprintln(t, "  ID\tKIND\tSTATUS\tRULE")
		for _, h := range d.Heuristics {
			fmt.Fprintf(t, "  %s\t%s\t%s\t%s\n", h.ID, h.Kind, h.Status, clip(oneLine(h.Rule), 80))
		}
		return t.Flush()
	}
	return nil
}

func printSkillResult(w io.Writer, res *kaizen.SkillResult) error {
	verb := "Updated"
	if res.Created {
		verb = "Created"
	}
	fmt.Fprintf(w, "%s skill %s (version %d, %s)", verb, res.Skill.Name, res.Skill.Version, res.Skill.Status)
	if res.Path != "" {
		fmt.Fprintf(w, " at %s", res.Path)
	}
	fmt.Fprintln(w)
	if res.Redacted > 0 {
		fmt.Fprintf(w, "%d secret(s) redacted from the document\n", res.Redacted)
	}
	return printHeuristicChanges(w, res.Adopted)
}

func skillGenerateCommand(a *app) *cobra.Command {
	var in kaizen.SkillGenerateInput
	cmd := &cobra.Command{
		Use:   "generate --task ID [--upgrade NAME]",
		Short: "Write a skill (or upgrade one) from a task's experience with the chat model",
		Long: `Write a skill from a task's extracted experience with the configured chat
model, as a draft (activate it with 'kaizen skill activate'), or upgrade an
existing skill with --upgrade (a new version). Without a chat model, let
the agent write it: 'kaizen experience request --kind skill', then
'kaizen experience submit --kind skill'.`,
		Example: "  kaizen skill generate --task bd-42 --upgrade rate-limiting",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.GenerateSkill(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printSkillResult(w, res) })
		},
	}
	beadIDFlag(cmd, &in.TaskID, "the task (bead) whose experience the skill is written from (required)")
	cmd.Flags().StringVar(&in.Skill, "upgrade", "", "the skill (name or id) to upgrade; default: a new skill")
	return cmd
}

func skillStatusCommand(a *app, use, status, short string) *cobra.Command {
	return &cobra.Command{
		Use:     use + " NAME|ID",
		Short:   short,
		Example: "  kaizen skill " + use + " rate-limiting",
		Args:    exactArgs(1, "one skill name or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.SetSkillStatus(cmd.Context(), kaizen.SkillStatusInput{Skill: args[0], Status: status})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Skill %s (version %d) is now %s\n", res.Skill.Name, res.Skill.Version, res.Skill.Status)
				return err
			})
		},
	}
}

func skillExportCommand(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export [NAME…] [-o FILE]",
		Short: "Write skills with their versions and heuristics as a bundle (JSON)",
		Long: `Write a skill bundle (kaizen-skill-bundle v1): the named skills (all of the
project's when none is named) with their versions and adopted heuristics,
secrets redacted. Without -o the bundle goes to standard output; with -o
the file is written atomically and a summary is printed (as JSON with
--json). Import it into another project with 'kaizen skill import'.`,
		Example: `  kaizen skill export -o skills.json
  kaizen skill export rate-limiting | kaizen --project other skill import -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, n := range args {
				if strings.TrimSpace(n) == "" {
					return usageError{fmt.Errorf("%s expects skill names or ids, got a blank argument", cmd.CommandPath())}
				}
			}
			in := kaizen.SkillExportInput{Names: args}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				res, err := e.ExportSkills(cmd.Context(), a.stdout, in)
				if err == nil && !a.json {
					fmt.Fprintf(a.stderr, "exported %s\n", skillExportSummary(res))
				}
				return err
			}
			var res *kaizen.SkillExportResult
			err = writeFileAtomic(out, func(w io.Writer) error {
				var err error
				res, err = e.ExportSkills(cmd.Context(), w, in)
				return err
			})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Exported %s to %s\n", skillExportSummary(res), out)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}

func skillExportSummary(res *kaizen.SkillExportResult) string {
	names := "none"
	if len(res.Skills) > 0 {
		names = strings.Join(res.Skills, ", ")
	}
	return fmt.Sprintf("%d skill(s) of project %s (%s) with %d heuristic(s)", len(res.Skills), res.Project, names, res.Heuristics)
}

func skillImportCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import a skill bundle (idempotent)",
		Long: `Import a bundle written by 'kaizen skill export' (- reads standard input)
into the current project. Skills whose name the project already has are
skipped, so importing the same bundle twice changes nothing; heuristics
are added when their id is new.`,
		Example: "  kaizen --project web skill import skills.json",
		Args:    exactArgs(1, "one file name, or - for standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, closeFn, err := openInput(a, args[0])
			if err != nil {
				return err
			}
			defer closeFn()
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ImportSkills(cmd.Context(), r, kaizen.SkillImportInput{})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Imported %d skill(s) into project %s", len(res.Imported), res.Project)
				if len(res.Imported) > 0 {
					fmt.Fprintf(w, ": %s", strings.Join(res.Imported, ", "))
				}
				fmt.Fprintf(w, "\n%d new heuristic(s)\n", res.Heuristics)
				if len(res.Skipped) > 0 {
					fmt.Fprintf(w, "Skipped %d skill(s) the project already has: %s\n", len(res.Skipped), strings.Join(res.Skipped, ", "))
				}
				return nil
			})
		},
	}
}
