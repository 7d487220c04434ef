package experience

import (
	"errors"
	"testing"
)

// The whole-lesson text joins trigger, rule and why on lines, collapses
// whitespace and leaves blank parts out.
func TestRecallText(t *testing.T) {
	for _, tc := range []struct{ trigger, rule, why, want string }{
		{"when  a", "do\tb", " because c ", "when a\ndo b\nbecause c"},
		{"when a", "do b", "  ", "when a\ndo b"},
		{"", "", "because c", "because c"},
		{"", "do b", "because c", "do b\nbecause c"},
		{"", "", "", ""},
	} {
		if got := RecallText(KindAvoid, tc.trigger, tc.rule, tc.why); got != tc.want {
			t.Errorf("RecallText(%q, %q, %q) = %q, want %q", tc.trigger, tc.rule, tc.why, got, tc.want)
		}
	}
}

// recall.topic_text accepts the two texts (and empty for the default) and
// rejects anything else with a ConfigError naming the field.
func TestRecallTopicTextConfig(t *testing.T) {
	if c := DefaultConfig(); c.Recall.TopicText != TopicLesson {
		t.Fatalf("default topic_text %q, want %q", c.Recall.TopicText, TopicLesson)
	}
	for _, v := range []string{"", TopicLesson, TopicStored, "why", "Lesson"} {
		c := DefaultConfig()
		c.Recall.TopicText = v
		err := c.Validate()
		ok := v == "" || v == TopicLesson || v == TopicStored
		var ce *ConfigError
		switch {
		case ok && err != nil:
			t.Errorf("topic_text %q: %v", v, err)
		case !ok && !errors.As(err, &ce):
			t.Errorf("topic_text %q: want a ConfigError, got %v", v, err)
		}
	}
}
