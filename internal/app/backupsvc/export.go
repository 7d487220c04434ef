package backupsvc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Export writes the selected projects as JSONL: a header line, then one
// record per line in a stable order with stable field names, every record
// type of every subsystem, read in one consistent snapshot.
func (s *Service) Export(ctx context.Context, w io.Writer, opts ExportOptions) (*ExportResult, error) {
	const op = "export"
	res := ExportResult{Records: map[string]int{}}
	bw := bufio.NewWriter(w)
	written := 0
	write := func(typ string, v any) error {
		rec, err := json.Marshal(v)
		if err != nil {
			return err
		}
		rec = scrubExported(rec)
		line, err := json.Marshal(exportLine{Type: typ, Record: rec})
		if err != nil {
			return err
		}
		if typ != recHeader {
			res.Records[typ]++
			written++
			if opts.Progress != nil && written%progressEvery == 0 {
				opts.Progress(written)
			}
		}
		_, err = bw.Write(append(line, '\n'))
		return err
	}
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		projects := opts.Projects
		switch {
		case opts.All:
			var err error
			if projects, err = tx.Projects(ctx); err != nil {
				return err
			}
		case len(projects) == 0:
			p, err := s.env.ResolveProject(op, "")
			if err != nil {
				return err
			}
			projects = []string{p}
		}
		for _, p := range projects {
			if err := app.ValidProject(p); err != nil {
				return app.Invalid(op, "project", "%v", err)
			}
		}
		res.Projects = projects
		if err := write(recHeader, exportHeader{Format: ExportFormat, Version: exportVersion,
			ExportedAt: s.env.Now(), Projects: projects, Kaizen: s.version}); err != nil {
			return err
		}
		for _, p := range projects {
			if err := exportLearning(ctx, tx, p, write); err != nil {
				return err
			}
			if err := exportExplore(ctx, tx, p, write); err != nil {
				return err
			}
			if err := exportExperience(ctx, tx, p, write); err != nil {
				return err
			}
			if err := exportTrace(ctx, tx, p, write); err != nil {
				return err
			}
			if err := exportTeam(ctx, tx, p, write); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, app.Wrap(op, err)
	}
	if opts.Progress != nil {
		opts.Progress(written)
	}
	return &res, nil
}

type writeFunc func(typ string, v any) error

// exportLearning writes the learning system's records: patterns (positive
// ones before anti-patterns, so that sources come first), maturity
// records, observations, outcomes, errors and tracked tasks.
func exportLearning(ctx context.Context, tx store.Tx, p string, write writeFunc) error {
	var patterns []learning.Pattern
	if err := tx.EachPattern(ctx, p, func(x learning.Pattern) error { patterns = append(patterns, x); return nil }); err != nil {
		return err
	}
	slices.SortStableFunc(patterns, func(a, b learning.Pattern) int {
		return boolOrder(a.Kind == learning.KindAntiPattern) - boolOrder(b.Kind == learning.KindAntiPattern)
	})
	for _, x := range patterns {
		if err := write(recPattern, x); err != nil {
			return err
		}
	}
	ms, err := tx.ListMaturity(ctx, p)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := write(recMaturity, m); err != nil {
			return err
		}
	}
	return errors.Join(
		tx.EachMaturityFeedback(ctx, p, func(x learning.MaturityFeedback) error { return write(recMaturityFeedback, x) }),
		tx.EachOutcome(ctx, p, func(x learning.Outcome) error { return write(recOutcome, x) }),
		tx.EachError(ctx, p, func(x learning.ErrorEntry) error { return write(recError, x) }),
		pages(func(limit, offset int) ([]learning.Task, error) {
			return tx.ListTasks(ctx, p, store.TaskFilter{Limit: limit, Offset: offset})
		}, func(x learning.Task) error { return write(recTask, x) }),
	)
}

// exploreSettingsKey is where the exploration service keeps a project's
// settings (package exploresvc).
func exploreSettingsKey(project string) string { return "explore/" + project }

// exportExplore writes the exploration settings and sessions.
func exportExplore(ctx context.Context, tx store.Tx, p string, write writeFunc) error {
	settings, err := tx.GetMeta(ctx, exploreSettingsKey(p))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return err
	default:
		if err := write(recExploreSettings, exploreSettingsRecord{Project: p, Settings: json.RawMessage(settings)}); err != nil {
			return err
		}
	}
	return pages(func(limit, offset int) ([]store.ExploreSession, error) {
		return tx.ListExploreSessions(ctx, p, store.ExploreFilter{Limit: limit, Offset: offset})
	}, func(x store.ExploreSession) error { return write(recExploreSession, x) })
}

// exportExperience writes the experience system's records: turns,
// signals, task experiences, heuristics with their evidence, support and
// verdicts, recalls, skills and their versions.
func exportExperience(ctx context.Context, tx store.Tx, p string, write writeFunc) error {
	err := errors.Join(
		pages(func(limit, offset int) ([]experience.Turn, error) {
			return tx.ListTurns(ctx, p, store.TurnFilter{Limit: limit, Offset: offset})
		}, func(x experience.Turn) error { return write(recTurn, x) }),
		pages(func(limit, offset int) ([]experience.FeedbackSignal, error) {
			return tx.ListSignals(ctx, p, store.SignalFilter{Limit: limit, Offset: offset})
		}, func(x experience.FeedbackSignal) error { return write(recSignal, x) }),
		pages(func(limit, offset int) ([]experience.TaskExperience, error) {
			return tx.ListExperiences(ctx, p, store.PageFilter{Limit: limit, Offset: offset})
		}, func(x experience.TaskExperience) error { return write(recExperience, x) }),
	)
	if err != nil {
		return err
	}
	var heuristics []experience.Heuristic
	if err := tx.EachHeuristic(ctx, p, nil, func(h experience.Heuristic) error {
		heuristics = append(heuristics, h)
		return write(recHeuristic, h)
	}); err != nil {
		return err
	}
	for _, h := range heuristics {
		evidence, err := tx.ListEvidence(ctx, p, h.ID)
		if err != nil {
			return err
		}
		for _, x := range evidence {
			if err := write(recHeuristicEvidence, x); err != nil {
				return err
			}
		}
		support, err := tx.ListSupport(ctx, p, h.ID)
		if err != nil {
			return err
		}
		for _, x := range support {
			if err := write(recHeuristicSupport, supportRecord{Project: p, HeuristicID: h.ID, TaskID: x.TaskID, At: x.At}); err != nil {
				return err
			}
		}
		verdicts, err := tx.ListHeuristicFeedback(ctx, p, h.ID)
		if err != nil {
			return err
		}
		for _, x := range verdicts {
			if err := write(recHeuristicFeedback, x); err != nil {
				return err
			}
		}
	}
	if err := pages(func(limit, offset int) ([]experience.RecallEvent, error) {
		return tx.ListRecalls(ctx, p, store.RecallFilter{Limit: limit, Offset: offset})
	}, func(x experience.RecallEvent) error { return write(recRecall, x) }); err != nil {
		return err
	}
	var skills []experience.Skill
	if err := pages(func(limit, offset int) ([]experience.Skill, error) {
		return tx.ListSkills(ctx, p, store.SkillFilter{Limit: limit, Offset: offset})
	}, func(x experience.Skill) error { skills = append(skills, x); return write(recSkill, x) }); err != nil {
		return err
	}
	for _, sk := range skills {
		versions, err := tx.ListSkillVersions(ctx, p, sk.ID)
		if err != nil {
			return err
		}
		for _, v := range versions {
			if err := write(recSkillVersion, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// pageSize is how many records an export reads at a time.
const pageSize = 1000

// pages reads a listing page by page and calls emit for every record.
func pages[T any](list func(limit, offset int) ([]T, error), emit func(T) error) error {
	for offset := 0; ; offset += pageSize {
		page, err := list(pageSize, offset)
		if err != nil {
			return err
		}
		for _, x := range page {
			if err := emit(x); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
	}
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}
