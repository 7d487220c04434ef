package kaizen_test

import (
	"encoding/json"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// TestRecallTopicCoversTheWhy: a task described by the symptom a lesson's
// why names ("the page fails to render on the server … window is not
// defined") finds the lesson with recall.topic_text = "lesson" (the
// default), and ranks it lower with "trigger_rule", which compares only the
// trigger and the rule. The same lessons, the same query; only the text
// the topic is measured on differs.
func TestRecallTopicCoversTheWhy(t *testing.T) {
	lessons := [][4]string{
		{"avoid", "when code in a page module touches browser globals at import time",
			"guard it or move it into an effect or a dynamic import with ssr disabled",
			"the server has no window object, so rendering the page fails with window is not defined"},
		{"prefer", "when adding a new page route",
			"add it to the router table and the navigation menu in the same change",
			"a route nobody links to is never visited"},
		{"verify", "before merging a change to the page layout",
			"check the layout on a narrow mobile viewport",
			"most users open the site on phones"},
	}
	query := "server side render fails: window is not defined"
	topics := map[string]float64{}
	for _, mode := range []string{experience.TopicLesson, experience.TopicStored} {
		b := setup(t, "sqlite", func(c *kaizen.Config) { c.Experience.Recall.TopicText = mode })
		var first string
		for i, l := range lessons {
			doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
				{"kind": l[0], "trigger": l[1], "rule": l[2], "why": l[3], "evidence": "task"}}})
			id := submit(t, b, sprintf("task-%d", i), doc).Heuristics[0].HeuristicID
			if i == 0 {
				first = id
			}
		}
		rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: query, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range rec.Items {
			if it.RefID == first {
				topics[mode] = it.Topic
			}
		}
		best, bestTopic := "", -1.0
		for _, it := range rec.Items {
			if it.Topic > bestTopic {
				best, bestTopic = it.RefID, it.Topic
			}
		}
		if mode == experience.TopicLesson && best != first {
			t.Errorf("topic_text %s: want the SSR lesson closest to the query, got %s (%+v)", mode, best, rec.Items)
		}
	}
	if topics[experience.TopicLesson] <= topics[experience.TopicStored] {
		t.Errorf("the why should bring the lesson closer: topic %v with the whole lesson, %v with trigger and rule", topics[experience.TopicLesson], topics[experience.TopicStored])
	}
}
