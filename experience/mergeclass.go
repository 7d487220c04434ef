package experience

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

// The merge classifier decides what a new heuristic candidate does with
// its nearest existing heuristic from several measures of the pair, not
// from the cosine of the whole texts alone: the cosines of trigger to
// trigger, rule to rule and trigger to rule, the overlap of the bilingual
// lexicon's concepts in each part, whether the kinds and languages match,
// negation and opposite cues, the length ratio and shared technical words
// (MergeFeatures). A multinomial logistic regression over them gives the
// probabilities of duplicate, related and unrelated, and the action is the
// one of least expected cost, folding an unrelated lesson (update or
// append) costing MergeClassifier.FoldCost right decisions
// (docs/experience.md, "The merge classifier"). The weights are fitted on
// the dev pairs by internal/recalleval.FitMergeClassifier.

// MergeLesson is one side of a pair the merge classifier compares.
type MergeLesson struct {
	Kind    HeuristicKind
	Trigger string
	Rule    string
}

// Embed embeds texts for the merge features; it must return one vector
// per text, unit length (or zero for a text with no words), all of one
// length.
type Embed func(texts []string) ([][]float32, error)

// MergeFeatureNames names the features of MergeFeatures, in order.
var MergeFeatureNames = []string{
	"cos_whole",          // cosine of HeuristicText of both
	"cos_trigger",        // trigger vs trigger
	"cos_rule",           // rule vs rule
	"cos_cross",          // mean of trigger(a)·rule(b) and rule(a)·trigger(b)
	"cos_trigger_x_rule", // cos_trigger · cos_rule
	"concepts_trigger",   // Jaccard of lexicon concepts, triggers
	"concepts_rule",      // Jaccard of lexicon concepts, rules
	"concepts_whole",     // Jaccard of lexicon concepts, both parts
	"words_whole",        // Jaccard of content word stems (Latin script, any language)
	"same_kind",          // 1 when the kinds are equal
	"cross_language",     // 1 when one side is Chinese and the other not
	"cross_x_cos_whole",  // cross_language · cos_whole
	"negation_differs",   // 1 when one rule negates and the other does not
	"opposites",          // opposite cues split between the sides (before/after, always/never…)
	"length_ratio",       // shorter / longer text length
}

// ErrMergeInput is returned (wrapped) for a pair the merge classifier
// cannot compare: a side with an empty trigger and rule, a vector of the
// wrong length or one that is not finite.
var ErrMergeInput = errors.New("experience: invalid merge pair")

// MergeFeatures computes the features of a pair (MergeFeatureNames) with
// embed. Either side needs a non-blank trigger or rule; a blank part of a
// side counts as dissimilar to everything.
func MergeFeatures(a, b MergeLesson, embed Embed) ([]float64, error) {
	if embed == nil {
		return nil, fmt.Errorf("%w: no embedder", ErrMergeInput)
	}
	at, ar := lifecycleOneLine(a.Trigger), lifecycleOneLine(a.Rule)
	bt, br := lifecycleOneLine(b.Trigger), lifecycleOneLine(b.Rule)
	if at == "" && ar == "" {
		return nil, fmt.Errorf("%w: the first lesson has no trigger and no rule", ErrMergeInput)
	}
	if bt == "" && br == "" {
		return nil, fmt.Errorf("%w: the second lesson has no trigger and no rule", ErrMergeInput)
	}
	aw, bw := HeuristicText(a.Kind, at, ar), HeuristicText(b.Kind, bt, br)
	vecs, err := embed([]string{aw, at, ar, bw, bt, br})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 6 {
		return nil, fmt.Errorf("%w: the embedder returned %d vectors for 6 texts", ErrMergeInput, len(vecs))
	}
	for _, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("%w: vectors of different lengths", ErrMergeInput)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%w: a vector is not finite", ErrMergeInput)
			}
		}
	}
	cos := func(i, j int) float64 {
		var s float64
		for k := range vecs[i] {
			s += float64(vecs[i][k]) * float64(vecs[j][k])
		}
		return max(-1, min(1, s))
	}
	ta, tb := newPairText(at, ar), newPairText(bt, br)
	cosTrig, cosRule := cos(1, 4), cos(2, 5)
	cross := 0.0
	if ta.zh != tb.zh {
		cross = 1
	}
	same := 0.0
	if a.Kind == b.Kind {
		same = 1
	}
	neg := 0.0
	if ta.negRule != tb.negRule {
		neg = 1
	}
	return []float64{
		cos(0, 3),
		cosTrig,
		cosRule,
		(cos(1, 5) + cos(2, 4)) / 2,
		cosTrig * cosRule,
		jaccard(ta.conceptsTrig, tb.conceptsTrig),
		jaccard(ta.conceptsRule, tb.conceptsRule),
		jaccard(union(ta.conceptsTrig, ta.conceptsRule), union(tb.conceptsTrig, tb.conceptsRule)),
		jaccard(ta.words, tb.words),
		same,
		cross,
		cross * cos(0, 3),
		neg,
		float64(opposites(ta.cues, tb.cues)),
		min(ta.length, tb.length) / max(ta.length, tb.length, 1),
	}, nil
}

// pairText is what MergeFeatures reads from one lesson's words.
type pairText struct {
	conceptsTrig, conceptsRule map[int]bool
	words                      map[string]bool
	cues                       map[string]bool
	negRule                    bool
	zh                         bool
	length                     float64 // Latin words + CJK characters / 2
}

func newPairText(trigger, rule string) pairText {
	p := pairText{conceptsTrig: map[int]bool{}, conceptsRule: map[int]bool{}, words: map[string]bool{}, cues: map[string]bool{}}
	var han, latin int
	for part, text := range []string{trigger, rule} {
		concepts := p.conceptsTrig
		if part == 1 {
			concepts = p.conceptsRule
		}
		var w tokenize.Words
		w.Scan(text)
		for _, tk := range w.Tokens {
			if tk.Han {
				run := w.Runes[tk.From:tk.To]
				han += len(run)
				tokenize.HanConcepts(run, func(c int) { concepts[c] = true })
				s := string(run)
				for _, c := range hanCues {
					if strings.Contains(s, c.term) {
						p.cues[c.cue] = true
						if part == 1 && c.cue == "not" {
							p.negRule = true
						}
					}
				}
				continue
			}
			word := string(w.Buf[tk.From:tk.To])
			latin++
			cue, ok := latinCues[word]
			if !ok {
				// Inflected forms meet by their stem ("reading" → read,
				// "added" → add); the stems of the listed words only.
				cue, ok = latinCueStems[string(w.Buf[tk.StemFrom:tk.StemTo])]
			}
			if ok {
				p.cues[cue] = true
				if part == 1 && cue == "not" {
					p.negRule = true
				}
			}
			if tk.Stop || tk.Part {
				continue
			}
			stem := w.Buf[tk.StemFrom:tk.StemTo]
			for _, c := range tokenize.WordConcepts(stem) {
				concepts[c] = true
			}
			if len(stem) >= 2 {
				p.words[string(stem)] = true
			}
		}
	}
	p.zh = han > 0 && float64(han) >= float64(latin)
	p.length = float64(latin) + float64(han)/2
	return p
}

// The cues: negation ("not") and the two sides of opposites. A Chinese
// term is found anywhere in a CJK run; an English word is matched as
// Words lowercases it, before stemming.
var latinCues = map[string]string{
	"not": "not", "never": "not", "dont": "not", "doesnt": "not", "avoid": "not", "no": "not", "without": "not", "stop": "not",
	"always": "always", "must": "always",
	"before": "before", "after": "after",
	"pin": "pin", "pinned": "pin", "pinning": "pin", "float": "float", "floating": "float", "latest": "float",
	"local": "local", "locally": "local", "ci": "remote", "remote": "remote", "server": "remote",
	"pass": "pass", "passes": "pass", "passing": "pass", "fail": "fail", "fails": "fail", "failing": "fail",
	"add": "add", "adding": "add", "remove": "remove", "removing": "remove", "delete": "remove", "drop": "remove",
	"increase": "up", "raise": "up", "more": "up", "decrease": "down", "lower": "down", "less": "down", "fewer": "down",
	"sync": "sync", "synchronous": "sync", "async": "async", "asynchronous": "async",
	"read": "read", "reads": "read", "write": "write", "writes": "write",
}

// latinCueStems maps the stem of each word of latinCues to its cue.
var latinCueStems = func() map[string]string {
	m := map[string]string{}
	for word, cue := range latinCues {
		var w tokenize.Words
		w.Scan(word)
		for _, tk := range w.Tokens {
			if st := string(w.Buf[tk.StemFrom:tk.StemTo]); len(st) >= 2 {
				if prev, dup := m[st]; !dup || prev == cue {
					m[st] = cue
				} else {
					m[st] = "" // two cues share a stem: neither
				}
			}
		}
	}
	for st, cue := range m {
		if cue == "" {
			delete(m, st)
		}
	}
	return m
}()

var hanCues = []struct{ term, cue string }{
	{"不要", "not"}, {"不能", "not"}, {"别", "not"}, {"禁止", "not"}, {"避免", "not"}, {"不得", "not"}, {"切勿", "not"}, {"不应", "not"},
	{"必须", "always"}, {"总是", "always"}, {"始终", "always"}, {"一定要", "always"},
	{"之前", "before"}, {"以前", "before"}, {"先", "before"}, {"之后", "after"}, {"以后", "after"}, {"后再", "after"},
	{"固定", "pin"}, {"锁定", "pin"}, {"最新", "float"},
	{"本地", "local"}, {"远程", "remote"}, {"服务器", "remote"},
	{"通过", "pass"}, {"失败", "fail"},
	{"增加", "add"}, {"添加", "add"}, {"加上", "add"}, {"删除", "remove"}, {"删掉", "remove"}, {"移除", "remove"},
	{"调大", "up"}, {"提高", "up"}, {"调小", "down"}, {"降低", "down"}, {"减少", "down"},
	{"同步", "sync"}, {"异步", "async"},
	{"读", "read"}, {"写", "write"},
}

// opposite cue pairs: a pair where one side has one cue and only the
// other side has its opposite counts once.
var oppositeCues = [][2]string{{"not", "always"}, {"before", "after"}, {"pin", "float"}, {"local", "remote"},
	{"pass", "fail"}, {"add", "remove"}, {"up", "down"}, {"sync", "async"}, {"read", "write"}}

func opposites(a, b map[string]bool) int {
	n := 0
	for _, o := range oppositeCues {
		if (a[o[0]] && !a[o[1]] && b[o[1]] && !b[o[0]]) || (a[o[1]] && !a[o[0]] && b[o[0]] && !b[o[1]]) {
			n++
		}
	}
	return n
}

func jaccard[K comparable](a, b map[K]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func union[K comparable](a, b map[K]bool) map[K]bool {
	out := make(map[K]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
