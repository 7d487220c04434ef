package experiencesvc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Recall tuning.
const (
	// recallPool is how many items each retrieval channel (full text,
	// vectors) proposes per kind before scoring.
	recallPool = 24
	// liveTurns is the number of a task's latest turns read for live
	// interaction signals.
	liveTurns = 16
)

// RecallInput asks for what past tasks teach about the current one.
type RecallInput struct {
	Project string `json:"project,omitempty"`
	// TaskID is the current task: its latest turns and errors give the
	// live interaction signals, and its own turns are not recalled.
	TaskID string `json:"bead_id,omitempty"`
	Query  string `json:"query"`
	// Kinds restricts recall to heuristic, skill and/or memory.
	Kinds []string `json:"kinds,omitempty"`
	// DryRun scores and renders without storing the recall or counting it.
	DryRun bool `json:"dry_run,omitempty"`
}

// RecalledItem is one considered item with what it is.
type RecalledItem struct {
	experience.RecallItem
	Title   string `json:"title"`
	Excerpt string `json:"excerpt"`
	// Status is the heuristic's or skill's state.
	Status string `json:"status,omitempty"`
}

// RecallResult is a recall: the live signals, every considered item with
// its scores, and the rendered text to put in the agent's context.
type RecallResult struct {
	// ID identifies the stored recall (for heuristic_feedback); empty on a
	// dry run.
	ID          string                  `json:"recall_id,omitempty"`
	Project     string                  `json:"project"`
	TaskID      string                  `json:"bead_id,omitempty"`
	Query       string                  `json:"query"`
	LiveSignals []experience.LiveSignal `json:"live_signals"`
	Items       []RecalledItem          `json:"items"`
	// Text is the injected guidance (empty when nothing passed the filter).
	Text string `json:"text"`
	// Heuristics and Skills are the injected ones.
	Heuristics []experience.Heuristic `json:"heuristics"`
	Skills     []experience.Skill     `json:"skills"`
	// Filter is what chose the injected items: "rules" (experience.Select)
	// or "model" (the unified LLM filter); FilterNote says why the model
	// was configured but not used.
	Filter     string `json:"filter"`
	FilterNote string `json:"filter_note,omitempty"`
	// Abstained is true when candidates were found but none was close
	// enough to the query to inject (experience.RecallThresholds): the
	// recall injects nothing rather than noise. AbstainReason says why.
	Abstained     bool   `json:"abstained,omitempty"`
	AbstainReason string `json:"abstain_reason,omitempty"`
}

// filter applies the unified filter: the chat model's choice when the
// configuration asks for it and a model answers, otherwise the rules.
func (s *Service) filter(ctx context.Context, query string, live []experience.LiveSignal,
	cands []experience.Candidate) ([]experience.Candidate, string, string) {
	f := s.cfg.Filter
	if !f.UseModel {
		return experience.Select(f, cands), "rules", ""
	}
	if s.chat == nil { // on by default: used when a chat model is configured
		return experience.Select(f, cands), "rules", ""
	}
	out, err := experience.FilterWithModel(ctx, s.chat, f, query, live, cands)
	if err != nil {
		s.env.Logger.Warn("recall: the model filter failed; the rules chose", "err", err)
		return experience.Select(f, cands), "rules", "the model filter failed: " + err.Error()
	}
	return out, "model", ""
}

// Recall retrieves heuristics, skills and memories for a query: full text
// and vectors fused by reciprocal rank; heuristics scored by the seed's
// three factors (topic similarity, trigger match with the live signals of
// the task's recent turns, quality weight); then the unified filter and
// the context budget. The rendered text frames everything as evidence to
// weigh, not instructions. The recall is stored (for feedback) unless
// DryRun.
func (s *Service) Recall(ctx context.Context, in RecallInput) (*RecallResult, error) {
	const op = "recall"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	in.Project = project
	if err := app.ValidText(op, "query", in.Query, app.MaxTextLen, true); err != nil {
		return nil, err
	}
	if in.TaskID != "" {
		if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
			return nil, err
		}
	}
	kinds := map[experience.ItemKind]bool{}
	for _, k := range in.Kinds {
		kind := experience.ItemKind(strings.ToLower(strings.TrimSpace(k)))
		if !slices.Contains(experience.ItemKinds, kind) {
			return nil, app.Invalid(op, "kinds", "unknown kind %q (want heuristic, skill or memory)", k)
		}
		kinds[kind] = true
	}
	if len(kinds) == 0 {
		for _, k := range experience.ItemKinds {
			kinds[k] = true
		}
	}
	if !s.cfg.HeuristicRecallEnabled {
		delete(kinds, experience.ItemHeuristic)
	}
	return s.recall(ctx, op, in, kinds)
}

func (s *Service) recall(ctx context.Context, op string, in RecallInput, kinds map[experience.ItemKind]bool) (*RecallResult, error) {
	in.Query = app.Scrub(in.Query) // stored with the recall event, logged, embedded
	now := s.env.Now()
	project := in.Project
	vecs, err := s.embed(ctx, op, in.Query)
	if err != nil {
		return nil, err
	}
	qv := vecs[0]
	tokens := experience.QueryTokens(in.Query)
	res := &RecallResult{Project: project, TaskID: in.TaskID, Query: in.Query, LiveSignals: []experience.LiveSignal{},
		Items: []RecalledItem{}, Heuristics: []experience.Heuristic{}, Skills: []experience.Skill{}}
	g, err := s.gather(ctx, op, in, kinds, qv, tokens, now)
	if err != nil {
		return nil, err
	}
	res.LiveSignals = g.live
	cands, scores, topics := g.cands, g.scores, g.topics
	relevant := s.abstain(res, cands, scores, topics, qv)
	selected, by, note := s.filter(ctx, in.Query, res.LiveSignals, relevant)
	res.Filter, res.FilterNote = by, note
	text, used := experience.Render(s.cfg.Filter, selected)
	res.Text = text
	injected := map[string]bool{}
	for _, c := range used {
		injected[c.RefID] = true
		switch {
		case c.Heuristic != nil:
			res.Heuristics = append(res.Heuristics, *c.Heuristic)
		case c.Skill != nil:
			res.Skills = append(res.Skills, *c.Skill)
		}
	}
	event := experience.RecallEvent{Project: project, TaskID: in.TaskID, Query: in.Query, LiveSignals: res.LiveSignals,
		Items: make([]experience.RecallItem, 0, len(cands)), CreatedAt: now}
	for _, c := range orderForReport(cands, injected) {
		d := describe(c)
		d.RecallItem = experience.RecallItem{Kind: c.Kind, RefID: c.RefID, Score: c.Score, Injected: injected[c.RefID]}
		if s, ok := scores[c.RefID]; ok && c.Kind == experience.ItemHeuristic {
			d.Topic, d.Trigger, d.Quality = s.Topic, s.Trigger, s.Quality
		} else {
			d.Topic = topics[c.RefID]
		}
		event.Items = append(event.Items, d.RecallItem)
		res.Items = append(res.Items, d)
	}
	if in.DryRun || len(cands) == 0 {
		return res, nil
	}
	event.ID = app.NewID("recall-")
	if !s.keepConsidered {
		event.Items = injectedItems(event.Items)
	}
	heuristics := make([]string, len(res.Heuristics))
	for i, h := range res.Heuristics {
		heuristics[i] = h.ID
	}
	if s.cfg.Recall.SyncWrites {
		if err := s.storeRecall(ctx, op, event, heuristics, now); err != nil {
			return nil, err
		}
	} else {
		s.recallWrites.start()
		go func() {
			defer s.recallWrites.done()
			// Written after the answer, whatever happens to the caller's
			// context: the recall happened.
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recallWriteTimeout)
			defer cancel()
			if err := s.storeRecall(wctx, op, event, heuristics, now); err != nil {
				s.env.Logger.Warn("recall: storing the recall event failed", "recall", event.ID, "project", project, "err", err)
			}
		}()
	}
	res.ID = event.ID
	return res, nil
}

// recallWriteTimeout bounds the write of a recall event after the answer.
const recallWriteTimeout = 30 * time.Second

// storeRecall stores a recall event and counts the recall of the
// heuristics it injected.
func (s *Service) storeRecall(ctx context.Context, op string, event experience.RecallEvent, heuristics []string, now time.Time) error {
	return s.env.Update(ctx, op, func(tx store.Tx) error {
		if _, err := tx.InsertRecall(ctx, event); err != nil {
			return err
		}
		for _, id := range heuristics {
			cur, err := tx.LockHeuristic(ctx, event.Project, id)
			if errors.Is(err, store.ErrNotFound) {
				continue // removed meanwhile
			}
			if err != nil {
				return err
			}
			cur.RecallCount++
			at := now
			cur.LastRecalledAt = &at
			if err := tx.UpdateHeuristic(ctx, cur); err != nil {
				return err
			}
		}
		return nil
	})
}

// SettleRecalls waits until the recall events written behind their
// answers are stored: reads of recalls and recall counts, heuristic
// feedback and Close call it first.
func (s *Service) SettleRecalls() { s.recallWrites.wait() }

// inflight counts background writes and lets readers wait for them.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond
}

func (f *inflight) start() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.idle != nil {
		f.idle.Broadcast()
	}
	f.mu.Unlock()
}

func (f *inflight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle == nil {
		f.idle = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.idle.Wait()
	}
}

// abstain keeps the candidates close enough to the query to inject
// (experience.RecallThresholds for the embedder); when there were
// candidates and none is, it marks the result abstained.
func (s *Service) abstain(res *RecallResult, cands []experience.Candidate, scores map[string]experience.HeuristicScore,
	topics map[string]float64, qv []float32) []experience.Candidate {
	if len(cands) == 0 {
		return cands
	}
	cal := s.cfg.Recall.For(s.embedder.ID())
	topicOf := func(c experience.Candidate) (float64, float64) {
		if sc, ok := scores[c.RefID]; ok && c.Kind == experience.ItemHeuristic {
			return sc.Topic, sc.Trigger
		}
		return topics[c.RefID], 0
	}
	best, second := 0.0, 0.0
	for _, c := range cands {
		t, _ := topicOf(c)
		if t > best {
			best, second = t, best
		} else if t > second {
			second = t
		}
	}
	out := make([]experience.Candidate, 0, len(cands))
	for _, c := range cands {
		t, g := topicOf(c)
		if cal.Passes(t, g, best, second, s.cfg.Recall.MinTrigger) && s.triggerPasses(cal, c, t, g, qv) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		res.Abstained = true
		res.AbstainReason = fmt.Sprintf("no recalled item is close enough to the query: best topic similarity %.3f < %.3f (recall.min_topic for %s)",
			best, cal.MinTopic, s.embedder.ID())
		if best >= cal.MinTopic {
			res.AbstainReason = fmt.Sprintf("no recalled item is close enough to the query: the closest (topic similarity %.3f) are lessons whose trigger "+
				"the query is not about (cosine with the trigger < %.2f, recall.calibrated min_trigger_topic for %s)", best, cal.MinTriggerTopic, s.embedder.ID())
		}
	}
	return out
}

// liveSignals detects the live interaction signals of a task from its
// latest turns and its open errors (as execution turns).
func (s *Service) liveSignals(ctx context.Context, tx store.Tx, project, taskID string) ([]experience.LiveSignal, error) {
	turns, err := tx.ListTurns(ctx, project, store.TurnFilter{TaskID: taskID, NewestFirst: true, Limit: liveTurns})
	if err != nil {
		return nil, err
	}
	errs, err := tx.ListErrors(ctx, project, store.ErrorFilter{TaskID: taskID, UnresolvedOnly: true, Limit: liveTurns})
	if err != nil {
		return nil, err
	}
	for _, er := range errs {
		turns = append(turns, experience.Turn{Project: project, TaskID: taskID, Role: experience.RoleTool,
			Content: "error: " + er.Message, Time: er.Timestamp, ID: er.ID})
	}
	slices.SortStableFunc(turns, func(a, b experience.Turn) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Seq, b.Seq), strings.Compare(a.ID, b.ID))
	})
	live := experience.DetectLiveSignals(turns)
	if live == nil {
		live = []experience.LiveSignal{}
	}
	return live, nil
}

// recallHeuristics proposes heuristics from both channels and scores the
// recallable ones by the seed's three factors, keeping the top-k.
func (s *Service) recallHeuristics(ctx context.Context, tx store.Tx, project string, qv []float32, tokens []string,
	live []experience.LiveSignal, scores map[string]experience.HeuristicScore, now time.Time) ([]experience.Candidate, error) {
	pool, topic, err := s.retrieve(ctx, tx, project, experience.ItemHeuristic, qv, tokens)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(pool))
	for i, f := range pool {
		ids[i] = f.RefID
	}
	got, err := tx.GetHeuristics(ctx, project, ids) // one batch; missing ones were removed meanwhile
	if err != nil {
		return nil, err
	}
	var out []experience.Candidate
	for _, h := range got {
		if !experience.Recallable(h.Status) {
			continue
		}
		s := experience.ScoreHeuristic(s.cfg.Weights, s.topicSimilarity(s.lessonTopic(qv, &h, topic[h.ID])), experience.TriggerSimilarity(live, h.Trigger),
			experience.QualityWeight(h, now, s.cfg.Lifecycle))
		scores[h.ID] = s
		out = append(out, experience.Candidate{Kind: experience.ItemHeuristic, RefID: h.ID, Score: s.Score, Heuristic: &h})
	}
	slices.SortFunc(out, func(a, b experience.Candidate) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.RefID, b.RefID))
	})
	if len(out) > s.cfg.RecallTopK {
		out = out[:s.cfg.RecallTopK]
	}
	return out, nil
}

// recallHybrid proposes skills or memories by full text and vectors fused
// by reciprocal rank, and scores each by its topic similarity and its
// fused rank: score = 0.7·topic + 0.3·rrf, where topic is the scaled
// cosine (see topicSimilarity) and rrf the fused score normalised so that
// the first item of both channels has 1. Items less similar than the
// filter's floor are dropped whatever their rank: a small store ranks
// irrelevant items first too. Only active skills are recalled, and never
// the current task's own turns.
func (s *Service) recallHybrid(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind, qv []float32,
	tokens []string, taskID string, topics map[string]float64) ([]experience.Candidate, error) {
	pool, cos, err := s.retrieve(ctx, tx, project, kind, qv, tokens)
	if err != nil {
		return nil, err
	}
	best := 2 / float64(s.cfg.RRFK+1)
	var kept []experience.Fused
	for _, f := range pool {
		if s.topicSimilarity(cos[f.RefID]) >= s.cfg.Filter.MinScore {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	ids := make([]string, len(kept))
	for i, f := range kept {
		ids[i] = f.RefID
	}
	// The items are read in one batch; ids missing from it were removed
	// meanwhile.
	skills := map[string]*experience.Skill{}
	turns := map[string]*experience.Turn{}
	switch kind {
	case experience.ItemSkill:
		got, err := tx.GetSkills(ctx, project, ids)
		if err != nil {
			return nil, err
		}
		for i := range got {
			skills[got[i].ID] = &got[i]
		}
	case experience.ItemMemory:
		got, err := tx.GetTurns(ctx, project, ids)
		if err != nil {
			return nil, err
		}
		for i := range got {
			turns[got[i].ID] = &got[i]
		}
	}
	var out []experience.Candidate
	for _, f := range kept {
		topic := s.topicSimilarity(cos[f.RefID])
		cand := experience.Candidate{Kind: kind, RefID: f.RefID,
			Score: float64(0.7*topic) + float64(0.3*min(1, f.Score/best))}
		switch kind {
		case experience.ItemSkill:
			sk := skills[f.RefID]
			if sk == nil || sk.Status != experience.SkillActive {
				continue
			}
			cand.Skill = sk
		case experience.ItemMemory:
			t := turns[f.RefID]
			if t == nil || (taskID != "" && t.TaskID == taskID) {
				continue
			}
			cand.Memory = t
		}
		topics[f.RefID] = topic
		out = append(out, cand)
	}
	return out, nil
}

// topicSimilarity turns a cosine into the seed's topic_similarity: the
// cosine itself, negative cosines counting as 0. The option
// recall.scale_topic restores the earlier scale for an embedder with a
// merge calibration: the cosine divided by its update threshold, capped at
// 1 (which flattens the ranking of the offline embedder above it).
func (s *Service) topicSimilarity(cos float64) float64 {
	if cos <= 0 || math.IsNaN(cos) {
		return 0
	}
	if s.cfg.Recall.ScaleTopic {
		if c, ok := s.cfg.Merge.Calibrated[s.embedder.ID()]; ok && c.Update > 0 {
			return min(1, cos/c.Update)
		}
	}
	return min(1, cos)
}

// retrieve runs both channels for one kind and fuses them: the result is
// best first by reciprocal rank (Ranks[0] full text, Ranks[1] vectors),
// with the cosine similarity of every item found, read from the vector
// index for full-text hits the vector channel did not return (0 for an
// item without a vector by the current embedder).
func (s *Service) retrieve(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind, qv []float32,
	tokens []string) ([]experience.Fused, map[string]float64, error) {
	var textIDs []string
	if len(tokens) > 0 {
		hits, err := tx.SearchText(ctx, project, kind, tokens, recallPool)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range hits {
			textIDs = append(textIDs, h.RefID)
		}
	}
	topic := map[string]float64{}
	var vecIDs []string
	if !veccache.ZeroVector(qv) {
		ix, err := s.vecs.Index(ctx, tx, project, kind)
		if err != nil {
			return nil, nil, err
		}
		hits, err := ix.Search(qv, recallPool)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range hits {
			vecIDs = append(vecIDs, h.ID)
			topic[h.ID] = float64(h.Score)
		}
		for _, id := range textIDs {
			if _, ok := topic[id]; ok {
				continue
			}
			c, _, err := ix.Similarity(qv, id)
			if err != nil {
				return nil, nil, err
			}
			topic[id] = float64(c)
		}
	}
	return experience.RRF(s.cfg.RRFK, textIDs, vecIDs), topic, nil
}

// orderForReport orders the considered items: injected first, then by
// kind in injection order and score.
func orderForReport(cands []experience.Candidate, injected map[string]bool) []experience.Candidate {
	out := slices.Clone(cands)
	rank := func(k experience.ItemKind) int { return slices.Index(experience.ItemKinds, k) }
	slices.SortStableFunc(out, func(a, b experience.Candidate) int {
		ia, ib := injected[a.RefID], injected[b.RefID]
		if ia != ib {
			if ia {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rank(a.Kind), rank(b.Kind)), cmp.Compare(b.Score, a.Score), strings.Compare(a.RefID, b.RefID))
	})
	return out
}

// describe gives an item a title and a short excerpt for listings.
func describe(c experience.Candidate) RecalledItem {
	var d RecalledItem
	switch {
	case c.Heuristic != nil:
		d.Title = string(c.Heuristic.Kind) + ": " + c.Heuristic.Rule
		d.Excerpt = "when " + c.Heuristic.Trigger
		d.Status = string(c.Heuristic.Status)
	case c.Skill != nil:
		d.Title = c.Skill.Name
		d.Excerpt = c.Skill.Description
		d.Status = string(c.Skill.Status)
	case c.Memory != nil:
		d.Title = string(c.Memory.Role) + " turn of task " + c.Memory.TaskID
		d.Excerpt = excerpt(c.Memory.Content, 200)
	}
	return d
}

// excerpt returns the first n runes of s on one line.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// GuidanceSections recalls heuristics and skills for plan guidance. A
// failing recall (an unreachable remote embedder) is logged and leaves the
// guidance without them rather than failing the plan.
func (s *Service) GuidanceSections(ctx context.Context, in learning.GuidanceRequest) []learning.GuidanceSection {
	kinds := map[experience.ItemKind]bool{experience.ItemSkill: true}
	if s.cfg.HeuristicRecallEnabled {
		kinds[experience.ItemHeuristic] = true
	}
	r, err := s.recall(ctx, "plan guidance", RecallInput{Project: in.Project, TaskID: in.TaskID, Query: in.Task}, kinds)
	if err != nil {
		s.env.Logger.Warn("plan guidance: recall failed", "project", in.Project, "err", err)
		return nil
	}
	if r.Text == "" {
		return nil
	}
	title := "Lessons from past tasks"
	if r.ID != "" {
		title += " (recall " + r.ID + ")"
	}
	return []learning.GuidanceSection{{Title: title, Body: r.Text}}
}
