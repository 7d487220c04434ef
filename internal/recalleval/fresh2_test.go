package recalleval_test

// fresh2 is a second blind holdout set for issue 18
// (testdata/eval-fresh2/README.md), in the format of fresh. Like fresh it
// stays out of sets, so no calibration test learns from it; TestRecallEval
// measures its holdout split and skips its dev one.
var fresh2 = evalSet{name: "fresh2", lessons: "../../testdata/eval-fresh2/lessons.jsonl",
	queries: map[string]string{"holdout": "../../testdata/eval-fresh2/queries.jsonl"},
	pairs:   map[string]string{"holdout": "../../testdata/eval-fresh2/pairs.jsonl"}}
