package experiencesvc

import (
	"hash/maphash"
	"sync"

	"github.com/kaizenhq/kaizen/experience"
)

// textEmbedder is an embedder that runs in process: cheap enough to embed
// a recall's candidate lessons while the agent waits (the offline
// embedder: ~12 µs per lesson).
type textEmbedder interface {
	EmbedText(text string) []float32
}

// lessonVectors caches the vectors of whole lessons (experience.RecallText)
// by the hash of their text, so a lesson edited or merged is embedded
// again and an unchanged one is not. It holds at most lessonVectorCap
// vectors and is emptied when full (recall then re-embeds at most a pool
// of candidates, well under a millisecond).
type lessonVectors struct {
	mu   sync.Mutex
	seed maphash.Seed
	vecs map[uint64][]float32
}

const lessonVectorCap = 4096

func (c *lessonVectors) get(e textEmbedder, text string) []float32 {
	c.mu.Lock()
	if c.vecs == nil {
		c.seed = maphash.MakeSeed()
		c.vecs = make(map[uint64][]float32)
	}
	key := maphash.String(c.seed, text)
	v, ok := c.vecs[key]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = e.EmbedText(text)
	c.mu.Lock()
	if len(c.vecs) >= lessonVectorCap {
		clear(c.vecs)
	}
	c.vecs[key] = v
	c.mu.Unlock()
	return v
}

// lessonTopic is a heuristic's cosine to the query vector qv, measured as
// recall.topic_text says. With "lesson" and an embedder that runs in
// process it is the larger of stored (the cosine of the stored
// trigger-and-rule vector) and the cosine of the whole lesson (trigger,
// rule and why): a task described by its symptom meets the why, and a
// short prompt that names the trigger's situation is not diluted by a long
// why. Otherwise it is stored.
func (s *Service) lessonTopic(qv []float32, h *experience.Heuristic, stored float64) float64 {
	if s.cfg.Recall.TopicText == experience.TopicStored {
		return stored
	}
	e, ok := s.embedder.(textEmbedder)
	if !ok {
		return stored
	}
	v := s.lessons.get(e, experience.RecallText(h.Kind, h.Trigger, h.Rule, h.Why))
	if len(v) != len(qv) {
		return stored
	}
	return max(dot(v, qv), stored)
}

// triggerPasses is the second check of a heuristic that passed the topic
// floor (experience.RecallCalibration.MinTriggerTopic): below
// TriggerCheckBelow, the cosine of the query vector qv and its trigger
// alone must reach the calibration's floor. Skills and memories, a
// heuristic injected by its live signals
// (trigger ≥ recall.min_trigger), a calibration without the check and an
// embedder that does not run in process pass.
func (s *Service) triggerPasses(cal experience.RecallCalibration, c experience.Candidate, topic, live float64, qv []float32) bool {
	if cal.TriggerPasses(topic, -1) || c.Kind != experience.ItemHeuristic || c.Heuristic == nil {
		return true
	}
	if s.cfg.Recall.MinTrigger > 0 && live >= s.cfg.Recall.MinTrigger {
		return true
	}
	e, ok := s.embedder.(textEmbedder)
	if !ok {
		return true
	}
	v := s.lessons.get(e, c.Heuristic.Trigger)
	if len(v) != len(qv) {
		return true
	}
	return cal.TriggerPasses(topic, dot(v, qv))
}
