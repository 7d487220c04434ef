package storetest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// Fixtures of the experience system: every field set.

func fullTurn(project, id string) experience.Turn {
	return experience.Turn{ID: id, Project: project, TaskID: "task-1", TurnID: "exchange-1", Role: experience.RoleUser,
		Content: longText("不要用 mock，改成真实数据库 \"quoted\"", 4<<10), Source: "claude", Time: at(1).In(zone), Seq: 1<<40 + 3}
}

func fullSignal(project, id string) experience.FeedbackSignal {
	return experience.FeedbackSignal{ID: id, Project: project, TaskID: "task-1", Type: experience.SignalCorrection,
		Source: experience.SourceUser, Evidence: "不对，应该用 pgx — \"no\"", TurnID: "exchange-1",
		Confidence: 0.1 + 0.2, Extractor: experience.ExtractorRules, CreatedAt: at(2).In(zone)}
}

func fullExperience(project, taskID string) experience.TaskExperience {
	return experience.TaskExperience{
		Project: project, TaskID: taskID, Goal: "迁移到 PostgreSQL", SuccessCriteria: []string{"tests pass", "", "無停機"},
		FailedAttempts: []experience.FailedAttempt{{Label: "a1", Approach: "sqlite shim", FailureReason: "locks",
			ReplacedBy: "pgx"}},
		WorkingApproach: longText("approach", 2<<10),
		Heuristics: []experience.TransferableHeuristic{{Kind: experience.KindAvoid, Trigger: "when migrating",
			Rule: "avoid shims", Why: "they lock", Evidence: "\"database is locked\""}},
		Signals: []experience.FeedbackSignal{fullSignal(project, "sig-in-exp")},
		Mode:    experience.ModeBalanced, Extractor: experience.ExtractorLLM, Calls: 1, CreatedAt: at(3),
	}
}

func fullHeuristic(project, id string) experience.Heuristic {
	return experience.Heuristic{ID: id, Project: project, Kind: experience.KindVerify, Trigger: "When editing SQL migrations",
		Rule: "Run the migration on 配置 PostgreSQL too", Why: longText("why", 1<<10),
		Status: experience.StatusActive, StatusReason: "promoted: 3 tasks", SupportTasks: 3, EvidenceCount: 4,
		HelpfulCount: bigInt, MisleadingCount: 1, MisleadingStreak: 1, RecallCount: 9, SupersededBy: "heur-0",
		SourceTaskID: "task-1", LastRecalledAt: ptr(at(5).In(zone)), LastValidatedAt: ptr(past),
		CreatedAt: at(1), UpdatedAt: at(6).In(zone)}
}

func fullEvidence(project, id, heuristicID string) experience.HeuristicEvidence {
	return experience.HeuristicEvidence{ID: id, Project: project, HeuristicID: heuristicID, TaskID: "task-2",
		Action: experience.EvidenceAppend, Text: "\"quote\" 证据", Similarity: 0.8123456789012345, CreatedAt: at(7)}
}

func fullHeuristicFeedback(project, id, heuristicID string) experience.HeuristicFeedback {
	return experience.HeuristicFeedback{ID: id, Project: project, HeuristicID: heuristicID, RecallID: "recall-1",
		TaskID: "task-3", Verdict: experience.VerdictMisleading, Note: "wrong here ✗", Source: "agent", CreatedAt: at(8)}
}

func fullRecall(project, id string, refs ...string) experience.RecallEvent {
	items := []experience.RecallItem{}
	for i, ref := range refs {
		items = append(items, experience.RecallItem{Kind: experience.ItemHeuristic, RefID: ref, Score: 1.0 / 3,
			Topic: 0.5, Trigger: 0.25, Quality: float64(i) + 0.1, Injected: i == 0})
	}
	return experience.RecallEvent{ID: id, Project: project, TaskID: "task-4", Query: "如何 configure \"pgx\"",
		LiveSignals: []experience.LiveSignal{experience.LiveRepeatedFailure, experience.LiveUserDissatisfaction},
		Items:       items, CreatedAt: at(9)}
}

func fullSkill(project, id, name string) experience.Skill {
	return experience.Skill{ID: id, Project: project, Name: name, Description: "Deploy with 配置 files",
		WhenToUse: "when deploying", Steps: trickyList("step"), Status: experience.SkillActive, Version: 2,
		Content: longText("---\nname: x\n---", 8<<10), SourceTaskID: "task-5", HeuristicIDs: []string{"heur-2", "heur-1"},
		CreatedAt: at(10).In(zone), UpdatedAt: at(11)}
}

func fullSkillVersion(project, skillID string, version int) experience.SkillVersion {
	return experience.SkillVersion{Project: project, SkillID: skillID, Version: version, Content: longText("v", 2<<10),
		Changelog: "added pitfalls 🚀", SourceTaskID: "task-6", CreatedAt: at(12 + version)}
}

func fullEmbedding(project, refID, embedder string, vector ...float32) store.Embedding {
	return store.Embedding{Project: project, Kind: experience.ItemHeuristic, RefID: refID, Embedder: embedder,
		Dim: len(vector), Vector: vector, UpdatedAt: at(13).In(zone)}
}

func turnID(v experience.Turn) string                     { return v.ID }
func signalID(v experience.FeedbackSignal) string         { return v.ID }
func experienceTask(v experience.TaskExperience) string   { return v.TaskID }
func heuristicID(v experience.Heuristic) string           { return v.ID }
func evidenceID(v experience.HeuristicEvidence) string    { return v.ID }
func hfeedbackID(v experience.HeuristicFeedback) string   { return v.ID }
func recallID(v experience.RecallEvent) string            { return v.ID }
func skillName(v experience.Skill) string                 { return v.Name }
func skillVersionNumber(v experience.SkillVersion) string { return strconv.Itoa(v.Version) }
func hitRef(h store.TextHit) string                       { return h.RefID }
func embeddingRef(e store.Embedding) string               { return e.RefID }

// insertAll inserts experience records in one Update; every insert must
// report true.
func insertAll(b *bundle, records ...any) {
	b.t.Helper()
	b.update(func(tx store.Tx) error {
		for _, r := range records {
			var ok bool
			var err error
			switch r := r.(type) {
			case experience.Turn:
				ok, err = tx.InsertTurn(b.ctx, r)
			case experience.FeedbackSignal:
				ok, err = tx.InsertSignal(b.ctx, r)
			case experience.TaskExperience:
				ok, err = tx.InsertExperience(b.ctx, r)
			case experience.Heuristic:
				ok, err = tx.InsertHeuristic(b.ctx, r)
			case experience.HeuristicEvidence:
				ok, err = tx.InsertEvidence(b.ctx, r)
			case experience.HeuristicFeedback:
				ok, err = tx.InsertHeuristicFeedback(b.ctx, r)
			case experience.RecallEvent:
				ok, err = tx.InsertRecall(b.ctx, r)
			case experience.Skill:
				ok, err = tx.InsertSkill(b.ctx, r)
			case experience.SkillVersion:
				ok, err = tx.InsertSkillVersion(b.ctx, r)
			case store.Embedding:
				ok, err = true, tx.PutEmbedding(b.ctx, r)
			default:
				b.t.Fatalf("insertAll: cannot insert a %T", r)
			}
			if err := inserted(ok, err); err != nil {
				return err
			}
		}
		return nil
	})
}

func testExperience(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		records := []any{fullTurn("p", "turn-1"), fullSignal("p", "sig-1"), fullExperience("p", "task-1"),
			fullHeuristic("p", "heur-1"), fullEvidence("p", "ev-1", "heur-1"), fullHeuristicFeedback("p", "fb-1", "heur-1"),
			fullRecall("p", "recall-1", "heur-1", "skill-1"), fullSkill("p", "skill-1", "deploy-with-config"),
			fullSkillVersion("p", "skill-1", 1), fullEmbedding("p", "heur-1", "hash-v1", 0.5, -1, float32(math.Pi), math.MaxFloat32)}
		for _, r := range records {
			requireAllSet(t, r)
		}
		insertAll(b, records...)
		// Every insert again, with other content, reports false and changes nothing.
		b.update(func(tx store.Tx) error {
			dup := func(ok bool, err error) error {
				if err == nil && ok {
					return errors.New("a duplicate insert reported true")
				}
				return err
			}
			turn := fullTurn("p", "turn-1")
			turn.Content = "other"
			sig := fullSignal("p", "sig-1")
			sig.Evidence = "other"
			exp := fullExperience("p", "task-1")
			exp.Goal = "other"
			h := fullHeuristic("p", "heur-1")
			h.Rule = "other"
			skill := fullSkill("p", "skill-1", "other-name")
			version := fullSkillVersion("p", "skill-1", 1)
			version.Content = "other"
			for _, err := range []error{
				dup(tx.InsertTurn(b.ctx, turn)), dup(tx.InsertSignal(b.ctx, sig)), dup(tx.InsertExperience(b.ctx, exp)),
				dup(tx.InsertHeuristic(b.ctx, h)), dup(tx.InsertEvidence(b.ctx, fullEvidence("p", "ev-1", "heur-9"))),
				dup(tx.InsertHeuristicFeedback(b.ctx, fullHeuristicFeedback("p", "fb-1", "heur-9"))),
				dup(tx.InsertRecall(b.ctx, fullRecall("p", "recall-1", "heur-9"))), dup(tx.InsertSkill(b.ctx, skill)),
				dup(tx.InsertSkill(b.ctx, fullSkill("p", "skill-2", "deploy-with-config"))),
				dup(tx.InsertSkillVersion(b.ctx, version)),
			} {
				if err != nil {
					return err
				}
			}
			return nil
		})
		requireEqual(t, "GetTurn", records[0], read(b, func(tx store.Tx) (experience.Turn, error) { return tx.GetTurn(b.ctx, "p", "turn-1") }))
		requireEqual(t, "ListSignals", []experience.FeedbackSignal{records[1].(experience.FeedbackSignal)},
			read(b, func(tx store.Tx) ([]experience.FeedbackSignal, error) {
				return tx.ListSignals(b.ctx, "p", store.SignalFilter{})
			}))
		requireEqual(t, "GetExperience", records[2], read(b, func(tx store.Tx) (experience.TaskExperience, error) {
			return tx.GetExperience(b.ctx, "p", "task-1")
		}))
		requireEqual(t, "GetHeuristic", records[3], read(b, func(tx store.Tx) (experience.Heuristic, error) {
			return tx.GetHeuristic(b.ctx, "p", "heur-1")
		}))
		requireEqual(t, "ListEvidence", []experience.HeuristicEvidence{records[4].(experience.HeuristicEvidence)},
			read(b, func(tx store.Tx) ([]experience.HeuristicEvidence, error) {
				return tx.ListEvidence(b.ctx, "p", "heur-1")
			}))
		requireEqual(t, "ListHeuristicFeedback", []experience.HeuristicFeedback{records[5].(experience.HeuristicFeedback)},
			read(b, func(tx store.Tx) ([]experience.HeuristicFeedback, error) {
				return tx.ListHeuristicFeedback(b.ctx, "p", "heur-1")
			}))
		requireEqual(t, "GetRecall", records[6], read(b, func(tx store.Tx) (experience.RecallEvent, error) {
			return tx.GetRecall(b.ctx, "p", "recall-1")
		}))
		requireEqual(t, "GetSkill", records[7], read(b, func(tx store.Tx) (experience.Skill, error) { return tx.GetSkill(b.ctx, "p", "skill-1") }))
		requireEqual(t, "GetSkillByName", records[7], read(b, func(tx store.Tx) (experience.Skill, error) {
			return tx.GetSkillByName(b.ctx, "p", "deploy-with-config")
		}))
		requireEqual(t, "ListSkillVersions", []experience.SkillVersion{records[8].(experience.SkillVersion)},
			read(b, func(tx store.Tx) ([]experience.SkillVersion, error) {
				return tx.ListSkillVersions(b.ctx, "p", "skill-1")
			}))
		requireEqual(t, "GetEmbedding", records[9], read(b, func(tx store.Tx) (store.Embedding, error) {
			return tx.GetEmbedding(b.ctx, "p", experience.ItemHeuristic, "heur-1")
		}))

		// Records with empty lists and nil times read back with empty,
		// non-nil lists and nil times.
		insertAll(b, experience.TaskExperience{Project: "p", TaskID: "task-empty"},
			experience.Heuristic{Project: "p", ID: "heur-empty"},
			experience.RecallEvent{Project: "p", ID: "recall-empty"},
			experience.Skill{Project: "p", ID: "skill-empty", Name: "empty"})
		requireEqual(t, "empty experience", experience.TaskExperience{Project: "p", TaskID: "task-empty",
			SuccessCriteria: []string{}, FailedAttempts: []experience.FailedAttempt{},
			Heuristics: []experience.TransferableHeuristic{}, Signals: []experience.FeedbackSignal{}},
			read(b, func(tx store.Tx) (experience.TaskExperience, error) {
				return tx.GetExperience(b.ctx, "p", "task-empty")
			}))
		requireEqual(t, "empty heuristic", experience.Heuristic{Project: "p", ID: "heur-empty"},
			read(b, func(tx store.Tx) (experience.Heuristic, error) { return tx.GetHeuristic(b.ctx, "p", "heur-empty") }))
		requireEqual(t, "empty recall", experience.RecallEvent{Project: "p", ID: "recall-empty",
			LiveSignals: []experience.LiveSignal{}, Items: []experience.RecallItem{}},
			read(b, func(tx store.Tx) (experience.RecallEvent, error) { return tx.GetRecall(b.ctx, "p", "recall-empty") }))
		requireEqual(t, "empty skill", experience.Skill{Project: "p", ID: "skill-empty", Name: "empty",
			Steps: []string{}, HeuristicIDs: []string{}},
			read(b, func(tx store.Tx) (experience.Skill, error) { return tx.GetSkill(b.ctx, "p", "skill-empty") }))

		// Missing records, also in another project.
		for what, do := range map[string]func(tx store.Tx) (any, error){
			"GetTurn":        func(tx store.Tx) (any, error) { return tx.GetTurn(b.ctx, "q", "turn-1") },
			"GetExperience":  func(tx store.Tx) (any, error) { return tx.GetExperience(b.ctx, "q", "task-1") },
			"GetHeuristic":   func(tx store.Tx) (any, error) { return tx.GetHeuristic(b.ctx, "p", "nope") },
			"GetRecall":      func(tx store.Tx) (any, error) { return tx.GetRecall(b.ctx, "q", "recall-1") },
			"GetSkill":       func(tx store.Tx) (any, error) { return tx.GetSkill(b.ctx, "p", "nope") },
			"GetSkillByName": func(tx store.Tx) (any, error) { return tx.GetSkillByName(b.ctx, "q", "deploy-with-config") },
			"GetEmbedding": func(tx store.Tx) (any, error) {
				return tx.GetEmbedding(b.ctx, "p", experience.ItemSkill, "heur-1")
			},
		} {
			_, err := get(b, do)
			requireNotFound(t, what, err)
		}
		for what, fn := range map[string]func(tx store.Tx) error{
			"LockHeuristic":   func(tx store.Tx) error { _, err := tx.LockHeuristic(b.ctx, "p", "nope"); return err },
			"UpdateHeuristic": func(tx store.Tx) error { return tx.UpdateHeuristic(b.ctx, fullHeuristic("q", "heur-1")) },
			"LockSkill":       func(tx store.Tx) error { _, err := tx.LockSkill(b.ctx, "p", "nope"); return err },
			"UpdateSkill":     func(tx store.Tx) error { return tx.UpdateSkill(b.ctx, fullSkill("q", "skill-1", "x")) },
		} {
			requireNotFound(t, what, b.s.Update(b.ctx, fn))
		}

		// The same ids in another project are other records.
		insertAll(b, fullTurn("q", "turn-1"), fullHeuristic("q", "heur-1"), fullSkill("q", "skill-1", "deploy-with-config"),
			fullExperience("q", "task-1"), fullRecall("q", "recall-1"))
	})

	t.Run("TurnsAndSignals", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		seq := int64(100)
		turn := func(id, task string, role experience.Role, sec int) experience.Turn {
			v := fullTurn("p", id)
			seq--
			v.TaskID, v.Role, v.Time, v.Seq = task, role, at(sec), seq
			return v
		}
		// t-b and t-a share a time: the capture order (Seq) puts t-a
		// first; ids break ties of equal seq only.
		insertAll(b, turn("t-b", "task-1", experience.RoleUser, 5), turn("t-a", "task-1", experience.RoleAssistant, 5),
			turn("t-c", "task-2", experience.RoleTool, 1), turn("t-d", "task-1", experience.RoleUser, 9))
		same := turn("t-0", "task-3", experience.RoleUser, 7)
		later := turn("t-9", "task-3", experience.RoleAssistant, 7)
		later.Seq = same.Seq + 1
		insertAll(b, later, same)
		requireEqual(t, "ListTurns same time by seq", []string{"t-0", "t-9"}, keys(read(b, func(tx store.Tx) ([]experience.Turn, error) {
			return tx.ListTurns(b.ctx, "p", store.TurnFilter{TaskID: "task-3"})
		}), turnID))
		b.update(func(tx store.Tx) error {
			for _, id := range []string{"t-0", "t-9"} {
				if err := tx.DeleteTurn(b.ctx, "p", id); err != nil {
					return err
				}
			}
			return nil
		})
		turns := func(f store.TurnFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]experience.Turn, error) { return tx.ListTurns(b.ctx, "p", f) }), turnID)
		}
		countTurns := func(f store.TurnFilter) int64 {
			return read(b, func(tx store.Tx) (int64, error) { return tx.CountTurns(b.ctx, "p", f) })
		}
		requireEqual(t, "ListTurns oldest first", []string{"t-c", "t-a", "t-b", "t-d"}, turns(store.TurnFilter{}))
		requireEqual(t, "ListTurns newest first", []string{"t-d", "t-b", "t-a", "t-c"}, turns(store.TurnFilter{NewestFirst: true}))
		requireEqual(t, "ListTurns by task", []string{"t-a", "t-b", "t-d"}, turns(store.TurnFilter{TaskID: "task-1"}))
		requireEqual(t, "ListTurns by roles", []string{"t-c", "t-b", "t-d"},
			turns(store.TurnFilter{Roles: []experience.Role{experience.RoleUser, experience.RoleTool}}))
		requireEqual(t, "ListTurns since (inclusive)", []string{"t-a", "t-b", "t-d"}, turns(store.TurnFilter{Since: at(5)}))
		requireEqual(t, "ListTurns paged", []string{"t-b", "t-a"}, turns(store.TurnFilter{NewestFirst: true, Limit: 2, Offset: 1}))
		requireEqual(t, "ListTurns offset only", []string{"t-d"}, turns(store.TurnFilter{Offset: 3}))
		if n := countTurns(store.TurnFilter{TaskID: "task-1", Roles: []experience.Role{experience.RoleUser}, Limit: 1, Offset: 1}); n != 2 {
			t.Errorf("CountTurns = %d, want 2 (Limit and Offset ignored)", n)
		}

		sig := func(id, task string, typ experience.SignalType, by experience.Extractor, sec int) experience.FeedbackSignal {
			v := fullSignal("p", id)
			v.TaskID, v.Type, v.Extractor, v.CreatedAt = task, typ, by, at(sec)
			return v
		}
		insertAll(b, sig("s-b", "task-1", experience.SignalReject, experience.ExtractorRules, 3),
			sig("s-a", "task-1", experience.SignalSuccess, experience.ExtractorLLM, 3),
			sig("s-c", "task-1", experience.SignalReject, experience.ExtractorRules, 1),
			sig("s-d", "task-2", experience.SignalReject, experience.ExtractorRules, 2))
		signals := func(f store.SignalFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]experience.FeedbackSignal, error) { return tx.ListSignals(b.ctx, "p", f) }), signalID)
		}
		requireEqual(t, "ListSignals order", []string{"s-c", "s-d", "s-a", "s-b"}, signals(store.SignalFilter{}))
		requireEqual(t, "ListSignals by task and type", []string{"s-c", "s-b"},
			signals(store.SignalFilter{TaskID: "task-1", Type: experience.SignalReject}))
		requireEqual(t, "ListSignals paged", []string{"s-d"}, signals(store.SignalFilter{Limit: 1, Offset: 1}))
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountSignals(b.ctx, "p", store.SignalFilter{Type: experience.SignalReject, Limit: 1})
		}); n != 3 {
			t.Errorf("CountSignals = %d, want 3", n)
		}
		if n := write(b, func(tx store.Tx) (int64, error) {
			return tx.DeleteSignals(b.ctx, "p", "task-1", experience.ExtractorRules)
		}); n != 2 {
			t.Errorf("DeleteSignals removed %d, want 2", n)
		}
		requireEqual(t, "signals after DeleteSignals", []string{"s-d", "s-a"}, signals(store.SignalFilter{}))
		if n := write(b, func(tx store.Tx) (int64, error) {
			return tx.DeleteSignals(b.ctx, "other", "task-1", experience.ExtractorLLM)
		}); n != 0 {
			t.Errorf("DeleteSignals in another project removed %d", n)
		}
	})

	t.Run("Experiences", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(task string, sec int) experience.TaskExperience {
			e := fullExperience("p", task)
			e.CreatedAt = at(sec)
			return e
		}
		insertAll(b, mk("task-b", 5), mk("task-a", 5), mk("task-c", 9), mk("task-d", 1))
		list := func(f store.PageFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]experience.TaskExperience, error) { return tx.ListExperiences(b.ctx, "p", f) }), experienceTask)
		}
		requireEqual(t, "ListExperiences newest first", []string{"task-c", "task-b", "task-a", "task-d"}, list(store.PageFilter{}))
		requireEqual(t, "ListExperiences paged", []string{"task-a", "task-d"}, list(store.PageFilter{Limit: 5, Offset: 2}))
		if n := read(b, func(tx store.Tx) (int64, error) { return tx.CountExperiences(b.ctx, "p") }); n != 4 {
			t.Errorf("CountExperiences = %d, want 4", n)
		}
	})

	t.Run("Heuristics", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id string, status experience.HeuristicStatus, kind experience.HeuristicKind, sec int, rule string) experience.Heuristic {
			h := fullHeuristic("p", id)
			h.Status, h.Kind, h.UpdatedAt, h.Rule, h.Trigger, h.Why = status, kind, at(sec), rule, "", ""
			return h
		}
		insertAll(b, mk("h-b", experience.StatusActive, experience.KindAvoid, 5, "Use 100% REAL database"),
			mk("h-a", experience.StatusCandidate, experience.KindAvoid, 5, "use_mock carefully"),
			mk("h-c", experience.StatusStale, experience.KindPrefer, 9, "Prefer ÉTATS in Ünicode"),
			mk("h-d", experience.StatusActive, experience.KindPrefer, 1, "usexmock"))
		list := func(f store.HeuristicFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]experience.Heuristic, error) { return tx.ListHeuristics(b.ctx, "p", f) }), heuristicID)
		}
		count := func(f store.HeuristicFilter) int64 {
			return read(b, func(tx store.Tx) (int64, error) { return tx.CountHeuristics(b.ctx, "p", f) })
		}
		requireEqual(t, "ListHeuristics order", []string{"h-c", "h-b", "h-a", "h-d"}, list(store.HeuristicFilter{}))
		active := []experience.HeuristicStatus{experience.StatusActive, experience.StatusCandidate}
		requireEqual(t, "by statuses", []string{"h-b", "h-a", "h-d"}, list(store.HeuristicFilter{Statuses: active}))
		requireEqual(t, "by kind", []string{"h-c", "h-d"}, list(store.HeuristicFilter{Kind: experience.KindPrefer}))
		requireEqual(t, "by statuses and kind", []string{"h-d"},
			list(store.HeuristicFilter{Statuses: active, Kind: experience.KindPrefer}))
		requireEqual(t, "search is case-insensitive", []string{"h-b"}, list(store.HeuristicFilter{Search: "real DATABASE"}))
		requireEqual(t, "search is unicode case-insensitive", []string{"h-c"}, list(store.HeuristicFilter{Search: "états in ü"}))
		requireEqual(t, "search: _ is no wildcard", []string{"h-a"}, list(store.HeuristicFilter{Search: "e_m"}))
		requireEqual(t, "search: % is no wildcard", []string{"h-b"}, list(store.HeuristicFilter{Search: "100%"}))
		requireEqual(t, "paged", []string{"h-a"}, list(store.HeuristicFilter{Statuses: active, Limit: 1, Offset: 1}))
		if n := count(store.HeuristicFilter{Statuses: active, Limit: 1, Offset: 1}); n != 3 {
			t.Errorf("CountHeuristics = %d, want 3", n)
		}
		var each []string
		b.view(func(tx store.Tx) error {
			return tx.EachHeuristic(b.ctx, "p", active, func(h experience.Heuristic) error {
				each = append(each, h.ID)
				return nil
			})
		})
		requireEqual(t, "EachHeuristic in id order", []string{"h-a", "h-b", "h-d"}, each)
		each = nil
		b.view(func(tx store.Tx) error {
			return tx.EachHeuristic(b.ctx, "p", nil, func(h experience.Heuristic) error { each = append(each, h.ID); return nil })
		})
		requireEqual(t, "EachHeuristic of every status", []string{"h-a", "h-b", "h-c", "h-d"}, each)
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachHeuristic(b.ctx, "p", nil, func(experience.Heuristic) error { return errStop })
		})
		if !errors.Is(err, errStop) {
			t.Errorf("EachHeuristic returned %v, want the callback's error", err)
		}

		// Update through the lock.
		changed := mk("h-a", experience.StatusRefined, experience.KindVerify, 20, "refined rule")
		changed.LastRecalledAt = nil
		b.update(func(tx store.Tx) error {
			if _, err := tx.LockHeuristic(b.ctx, "p", "h-a"); err != nil {
				return err
			}
			return tx.UpdateHeuristic(b.ctx, changed)
		})
		requireEqual(t, "after UpdateHeuristic", changed, read(b, func(tx store.Tx) (experience.Heuristic, error) {
			return tx.GetHeuristic(b.ctx, "p", "h-a")
		}))
		requireEqual(t, "search sees the update", []string{"h-a"}, list(store.HeuristicFilter{Search: "REFINED"}))

		// Evidence, support and feedback.
		ev := func(id, heur string, sec int) experience.HeuristicEvidence {
			e := fullEvidence("p", id, heur)
			e.CreatedAt = at(sec)
			return e
		}
		fb := func(id, heur string, sec int) experience.HeuristicFeedback {
			f := fullHeuristicFeedback("p", id, heur)
			f.CreatedAt = at(sec)
			return f
		}
		insertAll(b, ev("ev-b", "h-a", 2), ev("ev-a", "h-a", 2), ev("ev-c", "h-a", 1), ev("ev-d", "h-b", 0),
			fb("fb-b", "h-a", 2), fb("fb-a", "h-a", 2), fb("fb-c", "h-a", 1), fb("fb-d", "h-b", 0))
		requireEqual(t, "ListEvidence oldest first", []string{"ev-c", "ev-a", "ev-b"},
			keys(read(b, func(tx store.Tx) ([]experience.HeuristicEvidence, error) { return tx.ListEvidence(b.ctx, "p", "h-a") }), evidenceID))
		requireEqual(t, "ListHeuristicFeedback oldest first", []string{"fb-c", "fb-a", "fb-b"},
			keys(read(b, func(tx store.Tx) ([]experience.HeuristicFeedback, error) {
				return tx.ListHeuristicFeedback(b.ctx, "p", "h-a")
			}), hfeedbackID))
		adds := []struct {
			heur, task string
			sec        int
			want       bool
		}{{"h-a", "task-2", 5, true}, {"h-a", "task-1", 5, true}, {"h-a", "task-2", 1, false}, {"h-a", "task-0", 7, true},
			{"h-b", "task-2", 1, true}, {"h-a", "task-1", 0, false}}
		for _, a := range adds {
			if got := write(b, func(tx store.Tx) (bool, error) { return tx.AddSupport(b.ctx, "p", a.heur, a.task, at(a.sec)) }); got != a.want {
				t.Errorf("AddSupport(%s, %s) = %v, want %v", a.heur, a.task, got, a.want)
			}
		}
		requireEqual(t, "ListSupport: distinct, oldest first, with the time of the first add",
			[]store.Support{{TaskID: "task-1", At: at(5)}, {TaskID: "task-2", At: at(5)}, {TaskID: "task-0", At: at(7)}},
			read(b, func(tx store.Tx) ([]store.Support, error) { return tx.ListSupport(b.ctx, "p", "h-a") }))
		requireList(t, "ListSupport of another project", nil,
			read(b, func(tx store.Tx) ([]store.Support, error) { return tx.ListSupport(b.ctx, "q", "h-a") }))
		if got := read(b, func(tx store.Tx) ([]store.Support, error) { return tx.ListSupport(b.ctx, "p", "nope") }); got == nil || len(got) != 0 {
			t.Errorf("ListSupport of an unsupported heuristic = %#v, want an empty non-nil slice", got)
		}
	})

	t.Run("BatchGets", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var records []any
		var hIDs, tIDs, sIDs []string
		for i := range 40 { // more than one IN chunk
			hIDs = append(hIDs, fmt.Sprintf("heur-%02d", i))
			tIDs = append(tIDs, fmt.Sprintf("turn-%02d", i))
			records = append(records, fullHeuristic("p", hIDs[i]), fullTurn("p", tIDs[i]))
			if i < 3 {
				sIDs = append(sIDs, fmt.Sprintf("skill-%d", i))
				records = append(records, fullSkill("p", sIDs[i], fmt.Sprintf("skill-name-%d", i)))
			}
		}
		records = append(records, fullHeuristic("q", "heur-00"))
		insertAll(b, records...)
		sorted := func(ids []string) []string { return slices.Sorted(slices.Values(ids)) }
		ask := append(slices.Clone(hIDs), "heur-missing", "heur-00", "heur-39")
		got := read(b, func(tx store.Tx) ([]experience.Heuristic, error) { return tx.GetHeuristics(b.ctx, "p", ask) })
		requireEqual(t, "GetHeuristics ids", hIDs, sorted(keys(got, heuristicID)))
		for _, h := range got {
			if h.Project != "p" {
				t.Errorf("GetHeuristics returned %s of project %s", h.ID, h.Project)
			}
		}
		requireEqual(t, "GetHeuristics record", fullHeuristic("p", "heur-07"), got[slices.IndexFunc(got, func(h experience.Heuristic) bool { return h.ID == "heur-07" })])
		turns := read(b, func(tx store.Tx) ([]experience.Turn, error) { return tx.GetTurns(b.ctx, "p", append(tIDs, "turn-x")) })
		requireEqual(t, "GetTurns ids", tIDs, sorted(keys(turns, turnID)))
		skills := read(b, func(tx store.Tx) ([]experience.Skill, error) {
			return tx.GetSkills(b.ctx, "p", append(sIDs, "heur-01"))
		})
		requireEqual(t, "GetSkills count", 3, len(skills))
		none := read(b, func(tx store.Tx) ([]experience.Heuristic, error) { return tx.GetHeuristics(b.ctx, "p", nil) })
		requireEqual(t, "GetHeuristics of none", 0, len(none))
	})

	t.Run("LockHeuristicSerialises", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, experience.Heuristic{Project: "p", ID: "h"}, experience.Skill{Project: "p", ID: "s", Name: "s"})
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				h, err := tx.LockHeuristic(b.ctx, "p", "h")
				if err != nil {
					return err
				}
				h.RecallCount++
				if err := tx.UpdateHeuristic(b.ctx, h); err != nil {
					return err
				}
				s, err := tx.LockSkill(b.ctx, "p", "s")
				if err != nil {
					return err
				}
				s.Version++
				return tx.UpdateSkill(b.ctx, s)
			})
		})
		requireNoErrors(t, "Update", errs)
		if got := read(b, func(tx store.Tx) (experience.Heuristic, error) { return tx.GetHeuristic(b.ctx, "p", "h") }); got.RecallCount != workers {
			t.Errorf("RecallCount = %d after %d locked increments (lost updates)", got.RecallCount, workers)
		}
		if got := read(b, func(tx store.Tx) (experience.Skill, error) { return tx.GetSkill(b.ctx, "p", "s") }); got.Version != workers {
			t.Errorf("skill Version = %d after %d locked increments (lost updates)", got.Version, workers)
		}
	})

	t.Run("Recalls", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id, task string, sec int, refs ...string) experience.RecallEvent {
			r := fullRecall("p", id, refs...)
			r.TaskID, r.CreatedAt = task, at(sec)
			return r
		}
		insertAll(b, mk("r-b", "task-1", 5, "heur-1", "heur-2"), mk("r-a", "task-2", 5, "heur-2", "heur-2"),
			mk("r-c", "task-1", 9, "skill-1"), mk("r-d", "task-1", 1, "heur-1"), fullRecall("q", "r-q", "heur-1"))
		list := func(f store.RecallFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]experience.RecallEvent, error) { return tx.ListRecalls(b.ctx, "p", f) }), recallID)
		}
		count := func(f store.RecallFilter) int64 {
			return read(b, func(tx store.Tx) (int64, error) { return tx.CountRecalls(b.ctx, "p", f) })
		}
		requireEqual(t, "ListRecalls newest first", []string{"r-c", "r-b", "r-a", "r-d"}, list(store.RecallFilter{}))
		requireEqual(t, "by ref id", []string{"r-b", "r-d"}, list(store.RecallFilter{RefID: "heur-1"}))
		requireEqual(t, "by ref id listed twice", []string{"r-b", "r-a"}, list(store.RecallFilter{RefID: "heur-2"}))
		requireEqual(t, "by task and ref id", []string{"r-b"}, list(store.RecallFilter{TaskID: "task-1", RefID: "heur-2"}))
		requireEqual(t, "by task", []string{"r-c", "r-b", "r-d"}, list(store.RecallFilter{TaskID: "task-1"}))
		requireList(t, "by a ref id no recall considered", nil, list(store.RecallFilter{RefID: "heur"}))
		requireEqual(t, "paged", []string{"r-d"}, list(store.RecallFilter{RefID: "heur-1", Limit: 1, Offset: 1}))
		if n := count(store.RecallFilter{RefID: "heur-1", Limit: 1, Offset: 1}); n != 2 {
			t.Errorf("CountRecalls by ref id = %d, want 2", n)
		}
		if n := count(store.RecallFilter{RefID: "heur-2"}); n != 2 {
			t.Errorf("CountRecalls of a ref id listed twice in one recall = %d, want 2", n)
		}
	})

	t.Run("Skills", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id, name string, status experience.SkillStatus, desc string) experience.Skill {
			s := fullSkill("p", id, name)
			s.Status, s.Description = status, desc
			return s
		}
		insertAll(b, mk("skill-1", "deploy", experience.SkillActive, "Ship the BINARY"),
			mk("skill-2", "Build", experience.SkillDraft, "compile 100% of it"),
			mk("skill-3", "audit", experience.SkillActive, "check deploy logs"),
			fullSkill("q", "skill-9", "deploy"))
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.InsertSkill(b.ctx, mk("skill-4", "deploy", experience.SkillDraft, ""))
		}); ok {
			t.Error("InsertSkill with a name another skill has reported true")
		}
		list := func(f store.SkillFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]experience.Skill, error) { return tx.ListSkills(b.ctx, "p", f) }), skillName)
		}
		requireEqual(t, "ListSkills by name (bytewise)", []string{"Build", "audit", "deploy"}, list(store.SkillFilter{}))
		requireEqual(t, "by status", []string{"audit", "deploy"}, list(store.SkillFilter{Status: experience.SkillActive}))
		requireEqual(t, "search name or description", []string{"audit", "deploy"}, list(store.SkillFilter{Search: "DEPLOY"}))
		requireEqual(t, "search: % literal", []string{"Build"}, list(store.SkillFilter{Search: "100%"}))
		requireEqual(t, "paged", []string{"audit"}, list(store.SkillFilter{Limit: 1, Offset: 1}))
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountSkills(b.ctx, "p", store.SkillFilter{Status: experience.SkillActive, Limit: 1})
		}); n != 2 {
			t.Errorf("CountSkills = %d, want 2", n)
		}

		// Renaming to a taken name fails (not as ErrNotFound) and changes nothing.
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			return tx.UpdateSkill(b.ctx, mk("skill-2", "deploy", experience.SkillDraft, "x"))
		})
		if err == nil || errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrNameTaken) {
			t.Errorf("UpdateSkill to a taken name returned %v, want store.ErrNameTaken", err)
		}
		// Renaming frees the old name.
		renamed := mk("skill-1", "deploy-v2", experience.SkillArchived, "new")
		b.update(func(tx store.Tx) error { return tx.UpdateSkill(b.ctx, renamed) })
		requireEqual(t, "GetSkillByName after a rename", renamed,
			read(b, func(tx store.Tx) (experience.Skill, error) { return tx.GetSkillByName(b.ctx, "p", "deploy-v2") }))
		_, err = get(b, func(tx store.Tx) (experience.Skill, error) { return tx.GetSkillByName(b.ctx, "p", "deploy") })
		requireNotFound(t, "GetSkillByName of the old name", err)
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.InsertSkill(b.ctx, mk("skill-5", "deploy", experience.SkillDraft, ""))
		}); !ok {
			t.Error("InsertSkill with a name freed by a rename reported false")
		}
		// Keeping its own name is no conflict.
		same := renamed
		same.Version = 7
		b.update(func(tx store.Tx) error { return tx.UpdateSkill(b.ctx, same) })

		// Versions.
		insertAll(b, fullSkillVersion("p", "skill-1", 3), fullSkillVersion("p", "skill-1", 1),
			fullSkillVersion("p", "skill-1", 2), fullSkillVersion("p", "skill-2", 1), fullSkillVersion("q", "skill-1", 1))
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.InsertSkillVersion(b.ctx, fullSkillVersion("p", "skill-1", 2))
		}); ok {
			t.Error("InsertSkillVersion of an existing version reported true")
		}
		requireEqual(t, "ListSkillVersions", []string{"1", "2", "3"}, keys(read(b, func(tx store.Tx) ([]experience.SkillVersion, error) {
			return tx.ListSkillVersions(b.ctx, "p", "skill-1")
		}), skillVersionNumber))
	})

	t.Run("Embeddings", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, bad := range []store.Embedding{
			{Project: "p", Kind: experience.ItemHeuristic, RefID: "h", Embedder: "e", Dim: 3, Vector: []float32{1, 2}},
			{Project: "p", Kind: experience.ItemHeuristic, RefID: "h", Embedder: "e", Dim: 0, Vector: nil},
		} {
			err := b.s.Update(b.ctx, func(tx store.Tx) error { return tx.PutEmbedding(b.ctx, bad) })
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("PutEmbedding with dim %d and %d values returned %v, want store.ErrInvalid", bad.Dim, len(bad.Vector), err)
			}
		}
		if v := read(b, func(tx store.Tx) (int64, error) { return tx.ExperienceVersion(b.ctx, "p") }); v != 0 {
			t.Errorf("ExperienceVersion after refused embeddings = %d, want 0", v)
		}
		insertAll(b, fullEmbedding("p", "h-2", "e1", 1, 2), fullEmbedding("p", "h-1", "e1", 3, 4),
			fullEmbedding("p", "h-3", "e2", 5, 6, 7), fullEmbedding("q", "h-0", "e1", 1, 1))
		other := fullEmbedding("p", "s-1", "e1", 9, 9)
		other.Kind = experience.ItemSkill
		replaced := fullEmbedding("p", "h-2", "e1", -1, float32(math.Inf(1)))
		replaced.UpdatedAt = at(99)
		insertAll(b, other, replaced)
		requireEqual(t, "GetEmbedding after a replace", replaced, read(b, func(tx store.Tx) (store.Embedding, error) {
			return tx.GetEmbedding(b.ctx, "p", experience.ItemHeuristic, "h-2")
		}))
		eachOf := func(kind experience.ItemKind, embedder string) []store.Embedding {
			out := []store.Embedding{}
			b.view(func(tx store.Tx) error {
				return tx.EachEmbedding(b.ctx, "p", kind, embedder, func(e store.Embedding) error { out = append(out, e); return nil })
			})
			return out
		}
		requireEqual(t, "EachEmbedding e1", []store.Embedding{fullEmbedding("p", "h-1", "e1", 3, 4), replaced},
			eachOf(experience.ItemHeuristic, "e1"))
		requireEqual(t, "EachEmbedding e2", []string{"h-3"}, keys(eachOf(experience.ItemHeuristic, "e2"), embeddingRef))
		requireEqual(t, "EachEmbedding of skills", []string{"s-1"}, keys(eachOf(experience.ItemSkill, "e1"), embeddingRef))
		requireList(t, "EachEmbedding of an unknown embedder", nil, eachOf(experience.ItemHeuristic, "e3"))

		// Stale: a search document without a vector, or with one by another
		// embedder or of another dimension.
		b.update(func(tx store.Tx) error {
			for _, ref := range []string{"h-1", "h-2", "h-3", "h-4", "h-5"} {
				if err := tx.PutSearchDoc(b.ctx, "p", experience.ItemHeuristic, ref, "text "+ref); err != nil {
					return err
				}
			}
			return tx.PutEmbedding(b.ctx, fullEmbedding("p", "h-5", "e1", 1, 2, 3))
		})
		stale := func(embedder string, dim, limit int) []string {
			return read(b, func(tx store.Tx) ([]string, error) {
				return tx.StaleEmbeddings(b.ctx, "p", experience.ItemHeuristic, embedder, dim, limit)
			})
		}
		requireEqual(t, "StaleEmbeddings e1/2", []string{"h-3", "h-4", "h-5"}, stale("e1", 2, 0))
		requireEqual(t, "StaleEmbeddings e1/2 limited", []string{"h-3", "h-4"}, stale("e1", 2, 2))
		requireEqual(t, "StaleEmbeddings e2/3", []string{"h-1", "h-2", "h-4", "h-5"}, stale("e2", 3, 0))
		requireList(t, "StaleEmbeddings of skills (no documents)", nil, read(b, func(tx store.Tx) ([]string, error) {
			return tx.StaleEmbeddings(b.ctx, "p", experience.ItemSkill, "e1", 2, 0)
		}))

		// DeleteSearchDoc removes the embedding too.
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "h-1")
		}); !ok {
			t.Error("DeleteSearchDoc of an indexed item reported false")
		}
		_, err := get(b, func(tx store.Tx) (store.Embedding, error) {
			return tx.GetEmbedding(b.ctx, "p", experience.ItemHeuristic, "h-1")
		})
		requireNotFound(t, "GetEmbedding after DeleteSearchDoc", err)
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "h-1")
		}); ok {
			t.Error("DeleteSearchDoc of a deleted item reported true")
		}
		requireEqual(t, "StaleEmbeddings after a delete", []string{"h-3", "h-4", "h-5"}, stale("e1", 2, 0))
	})

	t.Run("StoreID", func(t *testing.T) {
		t.Parallel()
		b, other := setup(t), setup(t)
		id := read(b, func(tx store.Tx) (string, error) { return tx.StoreID(b.ctx) })
		if id == "" {
			t.Fatal("empty StoreID")
		}
		insertAll(b, fullEmbedding("p", "h-1", "e1", 1))
		if again := read(b, func(tx store.Tx) (string, error) { return tx.StoreID(b.ctx) }); again != id {
			t.Errorf("StoreID changed from %q to %q", id, again)
		}
		if o := read(other, func(tx store.Tx) (string, error) { return tx.StoreID(other.ctx) }); o == id {
			t.Errorf("two databases share the StoreID %q", id)
		}
	})

	t.Run("EmbeddingChanges", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		version := func() int64 {
			return read(b, func(tx store.Tx) (int64, error) { return tx.ExperienceVersion(b.ctx, "p") })
		}
		type changes struct {
			Written []string
			Removed []string
		}
		since := func(v int64, kind experience.ItemKind) changes {
			t.Helper()
			c := changes{Written: []string{}}
			b.view(func(tx store.Tx) error {
				var err error
				c.Removed, err = tx.EmbeddingChanges(b.ctx, "p", kind, v, func(e store.Embedding) error {
					c.Written = append(c.Written, e.RefID+"@"+e.Embedder)
					return nil
				})
				return err
			})
			return c
		}
		insertAll(b, fullEmbedding("p", "h-1", "e1", 1), fullEmbedding("p", "h-2", "e1", 2), fullEmbedding("q", "h-9", "e1", 1))
		v1 := version()
		requireEqual(t, "everything since 0", changes{Written: []string{"h-1@e1", "h-2@e1"}, Removed: []string{}},
			since(0, experience.ItemHeuristic))
		requireEqual(t, "nothing since the current version", changes{Written: []string{}, Removed: []string{}},
			since(v1, experience.ItemHeuristic))
		// A rewrite (by another embedder), a removal, a new vector, another
		// kind; then a removed vector written again.
		b.update(func(tx store.Tx) error {
			if err := tx.PutEmbedding(b.ctx, fullEmbedding("p", "h-3", "e1", 3)); err != nil {
				return err
			}
			if err := tx.PutEmbedding(b.ctx, fullEmbedding("p", "h-1", "e2", 1)); err != nil {
				return err
			}
			skill := fullEmbedding("p", "s-1", "e1", 1)
			skill.Kind = experience.ItemSkill
			if err := tx.PutEmbedding(b.ctx, skill); err != nil {
				return err
			}
			_, err := tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "h-2")
			return err
		})
		v2 := version()
		requireEqual(t, "since v1, in write order", changes{Written: []string{"h-3@e1", "h-1@e2"}, Removed: []string{"h-2"}},
			since(v1, experience.ItemHeuristic))
		requireEqual(t, "skills since v1", changes{Written: []string{"s-1@e1"}, Removed: []string{}}, since(v1, experience.ItemSkill))
		insertAll(b, fullEmbedding("p", "h-2", "e1", 2))
		requireEqual(t, "a removed vector written again is no longer removed",
			changes{Written: []string{"h-3@e1", "h-1@e2", "h-2@e1"}, Removed: []string{}}, since(v1, experience.ItemHeuristic))
		requireEqual(t, "since v2", changes{Written: []string{"h-2@e1"}, Removed: []string{}}, since(v2, experience.ItemHeuristic))
		// A failed transaction leaves no trace.
		failed := errors.New("rolled back")
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			if _, err := tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "h-3"); err != nil {
				return err
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatalf("failed update: %v", err)
		}
		requireEqual(t, "after a failed removal", changes{Written: []string{"h-2@e1"}, Removed: []string{}},
			since(v2, experience.ItemHeuristic))
	})

	t.Run("FullText", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		docs := map[string]string{
			"h-1": experience.SearchText("configure the database connection pool"),
			"h-2": experience.SearchText("database migrations need a backup"),
			"h-3": experience.SearchText("修改配置文件之前先备份"),
			"h-4": experience.SearchText("unrelated text about kittens"),
			"h-5": experience.SearchText("database connection pool configure"), // same terms as h-1
			"h-6": experience.SearchText("AND NEAR or NOT \"quoted\" star* (paren) col:umn"),
		}
		b.update(func(tx store.Tx) error {
			for ref, text := range docs {
				if err := tx.PutSearchDoc(b.ctx, "p", experience.ItemHeuristic, ref, text); err != nil {
					return err
				}
			}
			// Same text in another kind and another project: never found here.
			if err := tx.PutSearchDoc(b.ctx, "p", experience.ItemMemory, "m-1", docs["h-1"]); err != nil {
				return err
			}
			return tx.PutSearchDoc(b.ctx, "q", experience.ItemHeuristic, "h-9", docs["h-1"])
		})
		search := func(query string, limit int) []store.TextHit {
			t.Helper()
			return read(b, func(tx store.Tx) ([]store.TextHit, error) {
				return tx.SearchText(b.ctx, "p", experience.ItemHeuristic, experience.QueryTokens(query), limit)
			})
		}
		searchTokens := func(tokens ...string) []string {
			t.Helper()
			return keys(read(b, func(tx store.Tx) ([]store.TextHit, error) {
				return tx.SearchText(b.ctx, "p", experience.ItemHeuristic, tokens, 0)
			}), hitRef)
		}
		hits := search("configure database pool", 0)
		requireEqual(t, "more matching terms rank first, ties by ref id", []string{"h-1", "h-5", "h-2"}, keys(hits, hitRef))
		if len(hits) == 3 && !(hits[0].Score == hits[1].Score && hits[1].Score > hits[2].Score && hits[2].Score > 0) {
			t.Errorf("scores %v: want equal scores for equal documents, higher for more matches, all positive", hits)
		}
		// The scores are Okapi BM25 over the project's documents of the kind:
		// the statistics count documents of other kinds and projects apart.
		if want := bm25Of(docs, docs["h-1"], "configure database pool"); len(hits) > 0 && math.Abs(hits[0].Score-want) > 1e-9 {
			t.Errorf("score of h-1 = %v, want BM25 %v", hits[0].Score, want)
		}
		requireEqual(t, "limit", []string{"h-1"}, keys(search("configure database pool", 1), hitRef))
		requireEqual(t, "CJK bigram", []string{"h-3"}, keys(search("配置", 0), hitRef))
		requireEqual(t, "CJK bigrams of a phrase", []string{"h-3"}, keys(search("备份配置", 0), hitRef))
		requireList(t, "no match", nil, search("zebra", 0))
		requireList(t, "no tokens", nil, searchTokens())
		requireList(t, "only punctuation", nil, searchTokens(`"`, `*`, `(`, `)`, `:`, `'`, `-`, `^`))
		requireEqual(t, "operator words are plain terms", []string{"h-6"}, searchTokens("NOT", "AND", "OR"))
		requireEqual(t, "NEAR is a term", []string{"h-6"}, searchTokens("near"))
		requireEqual(t, "quotes and stars are separators", []string{"h-6", "h-2"},
			searchTokens(`"quoted`, `star*`, `backup"`, `col:umn`, `NEAR(`, `'`))
		requireEqual(t, "case-insensitive tokens", []string{"h-4"}, searchTokens("KITTENS"))
		requireEqual(t, "memory kind", []string{"m-1"}, keys(read(b, func(tx store.Tx) ([]store.TextHit, error) {
			return tx.SearchText(b.ctx, "p", experience.ItemMemory, []string{"pool"}, 0)
		}), hitRef))

		// Replacing a document replaces its terms; deleting removes it.
		b.update(func(tx store.Tx) error {
			return tx.PutSearchDoc(b.ctx, "p", experience.ItemHeuristic, "h-4", experience.SearchText("database kittens"))
		})
		replaced := search("backup kittens", 0)
		requireEqual(t, "after a replace (the shorter document first)", []string{"h-4", "h-2"}, keys(replaced, hitRef))
		docs["h-4"] = experience.SearchText("database kittens")
		if want := bm25Of(docs, docs["h-4"], "backup kittens"); len(replaced) > 0 && math.Abs(replaced[0].Score-want) > 1e-9 {
			t.Errorf("score of the replaced h-4 = %v, want BM25 %v (statistics not updated by the replace?)", replaced[0].Score, want)
		}
		requireList(t, "old terms of a replaced document", nil, search("unrelated", 0))
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "h-3")
		}); !ok {
			t.Error("DeleteSearchDoc reported false")
		}
		requireList(t, "after a delete", nil, search("配置", 0))
		delete(docs, "h-3")
		if got, want := search("database", 0), bm25Of(docs, docs["h-4"], "database"); len(got) != 4 || math.Abs(got[0].Score-want) > 1e-9 {
			t.Errorf("after a delete, search database = %v; want 4 hits, the first scoring BM25 %v", got, want)
		}
		if ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.DeleteSearchDoc(b.ctx, "p", experience.ItemSkill, "h-1")
		}); ok {
			t.Error("DeleteSearchDoc of an item of another kind reported true")
		}
	})

	t.Run("Version", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		version := func(project string) int64 {
			return read(b, func(tx store.Tx) (int64, error) { return tx.ExperienceVersion(b.ctx, project) })
		}
		if v := version("p"); v != 0 {
			t.Fatalf("ExperienceVersion of an unknown project = %d, want 0", v)
		}
		steps := []struct {
			what string
			do   func(tx store.Tx) error
			want int64
		}{
			{"PutSearchDoc", func(tx store.Tx) error { return tx.PutSearchDoc(b.ctx, "p", experience.ItemSkill, "s", "a b") }, 1},
			{"PutSearchDoc again", func(tx store.Tx) error { return tx.PutSearchDoc(b.ctx, "p", experience.ItemSkill, "s", "a b") }, 2},
			{"PutEmbedding", func(tx store.Tx) error { return tx.PutEmbedding(b.ctx, fullEmbedding("p", "s", "e", 1)) }, 3},
			{"DeleteSearchDoc", func(tx store.Tx) error {
				_, err := tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "s")
				return err
			}, 4},
			{"DeleteSearchDoc of nothing", func(tx store.Tx) error {
				_, err := tx.DeleteSearchDoc(b.ctx, "p", experience.ItemHeuristic, "s")
				return err
			}, 4},
			{"two writes in one Update", func(tx store.Tx) error {
				if err := tx.PutSearchDoc(b.ctx, "p", experience.ItemSkill, "t", "c"); err != nil {
					return err
				}
				_, err := tx.DeleteSearchDoc(b.ctx, "p", experience.ItemSkill, "s")
				return err
			}, 6},
			{"other records", func(tx store.Tx) error {
				return inserted(tx.InsertHeuristic(b.ctx, fullHeuristic("p", "h")))
			}, 6},
		}
		for _, s := range steps {
			b.update(s.do)
			if v := version("p"); v != s.want {
				t.Errorf("ExperienceVersion after %s = %d, want %d", s.what, v, s.want)
			}
		}
		if v := version("q"); v != 0 {
			t.Errorf("ExperienceVersion of another project = %d, want 0", v)
		}
		// A failed Update leaves the version as it was.
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			if err := tx.PutSearchDoc(b.ctx, "p", experience.ItemSkill, "u", "d"); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Update returned %v", err)
		}
		if v := version("p"); v != 6 {
			t.Errorf("ExperienceVersion after a failed Update = %d, want 6", v)
		}
	})

	t.Run("RollbackAndProjects", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, fullSkill("p", "skill-1", "deploy"), fullHeuristic("p", "heur-1"))
		b.update(func(tx store.Tx) error {
			return tx.PutSearchDoc(b.ctx, "p", experience.ItemHeuristic, "heur-1", "database pool")
		})
		snapshot := func() string {
			t.Helper()
			var out []any
			b.view(func(tx store.Tx) error {
				for _, project := range []string{"p", "new"} {
					turns, err1 := tx.ListTurns(b.ctx, project, store.TurnFilter{})
					signals, err2 := tx.ListSignals(b.ctx, project, store.SignalFilter{})
					exps, err3 := tx.ListExperiences(b.ctx, project, store.PageFilter{})
					heurs, err4 := tx.ListHeuristics(b.ctx, project, store.HeuristicFilter{})
					ev, err5 := tx.ListEvidence(b.ctx, project, "heur-1")
					sup, err6 := tx.ListSupport(b.ctx, project, "heur-1")
					fb, err7 := tx.ListHeuristicFeedback(b.ctx, project, "heur-1")
					recalls, err8 := tx.ListRecalls(b.ctx, project, store.RecallFilter{RefID: "heur-1"})
					skills, err9 := tx.ListSkills(b.ctx, project, store.SkillFilter{})
					versions, err10 := tx.ListSkillVersions(b.ctx, project, "skill-1")
					stale, err11 := tx.StaleEmbeddings(b.ctx, project, experience.ItemHeuristic, "e", 1, 0)
					hits, err12 := tx.SearchText(b.ctx, project, experience.ItemHeuristic, []string{"database", "new"}, 0)
					version, err13 := tx.ExperienceVersion(b.ctx, project)
					if err := errors.Join(err1, err2, err3, err4, err5, err6, err7, err8, err9, err10, err11, err12, err13); err != nil {
						return err
					}
					out = append(out, turns, signals, exps, heurs, ev, sup, fb, recalls, skills, versions, stale, hits, version)
				}
				projects, err := tx.Projects(b.ctx)
				out = append(out, projects)
				return err
			})
			return diff(nil, out)
		}
		before := snapshot()
		renamed := fullSkill("p", "skill-1", "renamed")
		changed := fullHeuristic("p", "heur-1")
		changed.Status = experience.StatusArchived
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			for _, project := range []string{"p", "new"} {
				for _, err := range []error{
					inserted(tx.InsertTurn(b.ctx, fullTurn(project, "turn-1"))),
					inserted(tx.InsertSignal(b.ctx, fullSignal(project, "sig-1"))),
					inserted(tx.InsertExperience(b.ctx, fullExperience(project, "task-1"))),
					inserted(tx.InsertEvidence(b.ctx, fullEvidence(project, "ev-1", "heur-1"))),
					inserted(tx.AddSupport(b.ctx, project, "heur-1", "task-1", at(1))),
					inserted(tx.InsertHeuristicFeedback(b.ctx, fullHeuristicFeedback(project, "fb-1", "heur-1"))),
					inserted(tx.InsertRecall(b.ctx, fullRecall(project, "recall-1", "heur-1"))),
					inserted(tx.InsertSkillVersion(b.ctx, fullSkillVersion(project, "skill-1", 1))),
					tx.PutSearchDoc(b.ctx, project, experience.ItemHeuristic, "heur-2", "new database"),
					tx.PutEmbedding(b.ctx, fullEmbedding(project, "heur-1", "e", 1)),
				} {
					if err != nil {
						return err
					}
				}
			}
			for _, err := range []error{
				inserted(tx.InsertHeuristic(b.ctx, fullHeuristic("new", "heur-1"))),
				inserted(tx.InsertSkill(b.ctx, fullSkill("new", "skill-1", "deploy"))),
				tx.UpdateSkill(b.ctx, renamed),
				tx.UpdateHeuristic(b.ctx, changed),
				tx.PutSearchDoc(b.ctx, "p", experience.ItemHeuristic, "heur-1", "replaced"),
			} {
				if err != nil {
					return err
				}
			}
			_, err := tx.DeleteSignals(b.ctx, "p", "task-1", experience.ExtractorRules)
			return errors.Join(err, errBoom)
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Update returned %v, want %v", err, errBoom)
		}
		if after := snapshot(); after != before {
			t.Errorf("a failed Update left traces:\nbefore %s\nafter %s", before, after)
		}
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertSkill(b.ctx, fullSkill("p", "skill-2", "renamed")) }); !ok {
			t.Error("the name of a rolled back rename is still taken")
		}

		// Projects lists projects that only hold experience data.
		b2 := setup(t)
		for i, add := range []func(tx store.Tx) error{
			func(tx store.Tx) error { return inserted(tx.InsertTurn(b2.ctx, fullTurn("a-turn", "t"))) },
			func(tx store.Tx) error { return inserted(tx.InsertHeuristic(b2.ctx, fullHeuristic("b-heur", "h"))) },
			func(tx store.Tx) error { return inserted(tx.InsertSkill(b2.ctx, fullSkill("c-skill", "s", "n"))) },
			func(tx store.Tx) error {
				return tx.PutSearchDoc(b2.ctx, "d-doc", experience.ItemMemory, "m", "x")
			},
			func(tx store.Tx) error { return inserted(tx.InsertRecall(b2.ctx, fullRecall("e-recall", "r"))) },
		} {
			if err := b2.s.Update(b2.ctx, add); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		requireEqual(t, "Projects", []string{"a-turn", "b-heur", "c-skill", "d-doc", "e-recall"},
			read(b2, func(tx store.Tx) ([]string, error) { return tx.Projects(b2.ctx) }))
		b2.update(func(tx store.Tx) error {
			_, err := tx.DeleteSearchDoc(b2.ctx, "d-doc", experience.ItemMemory, "m")
			return err
		})
		requireEqual(t, "Projects after deleting a project's only document", []string{"a-turn", "b-heur", "c-skill", "e-recall"},
			read(b2, func(tx store.Tx) ([]string, error) { return tx.Projects(b2.ctx) }))
	})
}

// bm25Of is the Okapi BM25 score of the document doc among docs (search
// texts) for a query, computed here from the terms.
func bm25Of(docs map[string]string, doc, query string) float64 {
	n, total := 0.0, 0.0
	df := map[string]float64{}
	for _, text := range docs {
		terms := store.TextTerms(text)
		n++
		total += float64(len(terms))
		seen := map[string]bool{}
		for _, term := range terms {
			if !seen[term] {
				seen[term] = true
				df[term]++
			}
		}
	}
	terms := store.TextTerms(doc)
	tf := map[string]float64{}
	for _, term := range terms {
		tf[term]++
	}
	score := 0.0
	for _, term := range store.QueryTerms(experience.QueryTokens(query)) {
		if tf[term] > 0 {
			score += store.BM25Term(store.BM25IDF(n, df[term]), tf[term], float64(len(terms)), total/n)
		}
	}
	return score
}

// FullTextWorkload writes, replaces and deletes search documents across
// projects and kinds, including a failed transaction and writes undone
// with it, for checks of the full-text statistics a backend keeps.
func FullTextWorkload(t *testing.T, s store.Store) {
	t.Helper()
	ctx := t.Context()
	texts := []string{"configure the database connection pool", "database migrations need a backup",
		"修改配置文件之前先备份", "retry the flaky test twice", "pool pool pool", ""}
	kinds := []experience.ItemKind{experience.ItemHeuristic, experience.ItemMemory, experience.ItemSkill}
	put := func(tx store.Tx, i int) error {
		return tx.PutSearchDoc(ctx, "p"+strconv.Itoa(i%2), kinds[i%3], "ref-"+strconv.Itoa(i%17),
			experience.SearchText(texts[i%len(texts)]+" "+strconv.Itoa(i%5)))
	}
	for round := range 4 {
		err := s.Update(ctx, func(tx store.Tx) error {
			for i := range 40 {
				if err := put(tx, i*(round+1)+round); err != nil {
					return err
				}
			}
			for i := range 5 {
				if _, err := tx.DeleteSearchDoc(ctx, "p"+strconv.Itoa(i%2), kinds[(i+round)%3], "ref-"+strconv.Itoa(i*3+round)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Rewrites of documents with repeated terms, to the same text and to
	// another.
	for _, text := range []string{"pool pool pool", "pool pool pool", "pool retry pool", "retry"} {
		err := s.Update(ctx, func(tx store.Tx) error {
			return tx.PutSearchDoc(ctx, "p0", experience.ItemHeuristic, "repeated", experience.SearchText(text))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	failed := errors.New("rolled back")
	err := s.Update(ctx, func(tx store.Tx) error {
		for i := range 30 {
			if err := put(tx, i*7+1); err != nil {
				return err
			}
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("failed update: %v", err)
	}
}
