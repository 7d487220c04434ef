package experience

// Topic texts: what a heuristic's topic similarity to a recall query is
// measured on (RecallThresholds.TopicText).
const (
	// TopicLesson measures the whole lesson, trigger, rule and why, and
	// keeps the larger of that cosine and TopicStored's. The why usually
	// names the symptom or the consequence ("the server has no window, so
	// the page fails to render"), which is how a task is often described
	// before anyone knows the rule; the larger of the two keeps a prompt
	// that names the trigger from being diluted by a long why. It needs an embedder
	// that runs in process (the offline one): candidates are embedded at
	// recall time; with a remote embedder recall falls back to
	// TopicStored.
	TopicLesson = "lesson"
	// TopicStored measures the stored vector of trigger and rule, the
	// text deduplication compares (HeuristicText).
	TopicStored = "trigger_rule"
)

// RecallText is the text a heuristic's topic similarity is measured on
// with TopicLesson: HeuristicText followed by the why, each line trimmed
// with its whitespace collapsed; blank parts left out.
func RecallText(kind HeuristicKind, trigger, rule, why string) string {
	t := HeuristicText(kind, trigger, rule)
	w := lifecycleOneLine(why)
	switch {
	case w == "":
		return t
	case t == "":
		return w
	}
	return t + "\n" + w
}
