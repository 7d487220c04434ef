package experiencesvc

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// HeuristicLearned is a heuristic that changed in a period.
type HeuristicLearned struct {
	ID      string                     `json:"id"`
	Kind    experience.HeuristicKind   `json:"kind"`
	Trigger string                     `json:"trigger"`
	Rule    string                     `json:"rule"`
	Status  experience.HeuristicStatus `json:"status"`
	Reason  string                     `json:"status_reason"`
	// At is when it happened: creation, promotion (the evidence or
	// support that met the rule, else its last update) or last change.
	At           time.Time `json:"at"`
	SupportTasks int64     `json:"support_tasks"`
	Evidence     int64     `json:"evidence_count"`
	SourceTaskID string    `json:"source_task_id,omitempty"`
}

// SkillLearned is a skill activated in a period.
type SkillLearned struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Version     int       `json:"version"`
	At          time.Time `json:"at"`
}

// ExperienceLearned is the experience system's part of a digest.
type ExperienceLearned struct {
	HeuristicsCreated  []HeuristicLearned `json:"heuristics_created"`
	HeuristicsPromoted []HeuristicLearned `json:"heuristics_promoted"`
	HeuristicsStale    []HeuristicLearned `json:"heuristics_stale"`
	SkillsActivated    []SkillLearned     `json:"skills_activated"`
}

// Learned reports what the project's experience system learned since a
// time: heuristics created, promoted (active or refined) and gone stale,
// and skills activated. The engine keeps each heuristic's current state,
// not every transition: a promotion is dated by the evidence and support
// that met the rule (else the heuristic's last update), a stale heuristic
// and an activated skill by their last update.
func (s *Service) Learned(ctx context.Context, project string, since time.Time) (*ExperienceLearned, error) {
	const op = "learned"
	out := &ExperienceLearned{HeuristicsCreated: []HeuristicLearned{}, HeuristicsPromoted: []HeuristicLearned{},
		HeuristicsStale: []HeuristicLearned{}, SkillsActivated: []SkillLearned{}}
	l := s.cfg.Lifecycle
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		var changed []experience.Heuristic
		if err := tx.EachHeuristic(ctx, project, nil, func(h experience.Heuristic) error {
			if !h.UpdatedAt.Before(since) || !h.CreatedAt.Before(since) {
				changed = append(changed, h)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, h := range changed {
			item := HeuristicLearned{ID: h.ID, Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule, Status: h.Status,
				Reason: h.StatusReason, SupportTasks: h.SupportTasks, Evidence: h.EvidenceCount, SourceTaskID: h.SourceTaskID}
			if !h.CreatedAt.Before(since) {
				c := item
				c.At = h.CreatedAt
				out.HeuristicsCreated = append(out.HeuristicsCreated, c)
			}
			switch h.Status {
			case experience.StatusActive, experience.StatusRefined:
				at := h.UpdatedAt
				if strings.HasPrefix(h.StatusReason, "promoted: supported") || strings.HasPrefix(h.StatusReason, "refined") {
					ev, err := tx.ListEvidence(ctx, project, h.ID)
					if err != nil {
						return err
					}
					sp, err := tx.ListSupport(ctx, project, h.ID)
					if err != nil {
						return err
					}
					if t, ok := metAt(ev, sp, l.PromoteEvidence, l.PromoteSupportTasks); ok {
						at = t
					}
				}
				if !at.Before(since) {
					item.At = at
					out.HeuristicsPromoted = append(out.HeuristicsPromoted, item)
				}
			case experience.StatusStale:
				item.At = h.UpdatedAt
				out.HeuristicsStale = append(out.HeuristicsStale, item)
			}
		}
		for offset := 0; ; offset += 500 {
			page, err := tx.ListSkills(ctx, project, store.SkillFilter{Status: experience.SkillActive, Limit: 500, Offset: offset})
			if err != nil {
				return err
			}
			for _, sk := range page {
				if !sk.UpdatedAt.Before(since) {
					out.SkillsActivated = append(out.SkillsActivated, SkillLearned{ID: sk.ID, Name: sk.Name,
						Description: sk.Description, Version: sk.Version, At: sk.UpdatedAt})
				}
			}
			if len(page) < 500 {
				return nil
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, l := range [][]HeuristicLearned{out.HeuristicsCreated, out.HeuristicsPromoted, out.HeuristicsStale} {
		slices.SortStableFunc(l, func(a, b HeuristicLearned) int { return b.At.Compare(a.At) })
	}
	return out, nil
}

// metAt is when a heuristic first had evidence records and supporting
// tasks enough for the promotion rule: the later of its evidence-th
// evidence record and its support-th supporting task.
func metAt(ev []experience.HeuristicEvidence, sp []store.Support, evidence, support int64) (time.Time, bool) {
	evidence, support = max(evidence, 1), max(support, 1)
	if int64(len(ev)) < evidence || int64(len(sp)) < support {
		return time.Time{}, false
	}
	a, b := ev[evidence-1].CreatedAt, sp[support-1].At
	if a.After(b) {
		return a, true
	}
	return b, true
}
