package learning

import (
	"regexp"
	"strings"
)

// Strategy is one of the seed's twelve decomposition strategies, with its
// English and Chinese labels and the phrasings that reveal it.
type Strategy struct {
	Key     string `json:"key"`
	Label   string `json:"label"`
	LabelZH string `json:"label_zh"`
	en      *regexp.Regexp
	zh      *regexp.Regexp
	keys    [3]string // content keys of Key, Label and LabelZH
}

// Tag is the pattern tag that identifies the strategy across languages.
func (s Strategy) Tag() string { return "strategy:" + s.Key }

// LabelFor returns the label in a locale.
func (s Strategy) LabelFor(l Locale) string {
	if l == LocaleZH {
		return s.LabelZH
	}
	return s.Label
}

func strategy(key, label, labelZH, en, zh string) Strategy {
	return Strategy{Key: key, Label: label, LabelZH: labelZH,
		en: regexp.MustCompile(`(?i)` + en), zh: regexp.MustCompile(zh),
		keys: [3]string{key, ContentKey(label), ContentKey(labelZH)}}
}

// Strategies are the seed's twelve strategies in the seed's order, which is
// also the order of extraction results.
var Strategies = []Strategy{
	strategy("split-by-file-type", "Split by file type", "按文件类型拆分",
		`\b(by|per|according to)\s+(the\s+)?file[\s-]*(type|extension|kind)s?\b|\bfile[\s-]*type[\s-]*based\b`,
		`按(照)?文件(类型|扩展名|种类)`),
	strategy("split-by-component", "Split by component", "按组件拆分",
		`\b(by|per)\s+(ui\s+)?components?\b|\bcomponent[\s-]*(based|wise)\b|\beach\s+component\b`,
		`按(照)?组件|每个组件`),
	strategy("split-by-layer", "Split by layer (UI/logic/data)", "按层拆分(UI/逻辑/数据)",
		`\b(by|per)\s+(architectural\s+)?(layers?|tiers?)\b|\blayer[\s-]*(based|wise)\b|\bui\s*/\s*(business\s+)?logic\s*/\s*data\b`,
		`按(照)?(层|层次|架构层)|分层拆分`),
	strategy("split-by-feature", "Split by feature", "按功能拆分",
		`\b(by|per)\s+(user[\s-]+facing\s+)?features?\b|\bfeature[\s-]*(based|wise|slices?)\b|\bvertical\s+slices?\b`,
		`按(照)?(功能|特性)`),
	strategy("one-file-per-subtask", "One file per subtask", "每个子任务一个文件",
		`\bone\s+file\s+(per|for\s+each|each)\s+(sub-?)?tasks?\b|\beach\s+(sub-?)?task\s+(handles|owns|touches|gets|edits|changes|modifies)\s+(exactly\s+)?(one|a\s+single)\s+file\b|\bsingle[\s-]+file\s+(sub-?)?tasks?\b`,
		`每个子任务(只)?(一个|单个)文件|一个子任务一个文件`),
	strategy("shared-types-first", "Handle shared types first", "先处理共享类型",
		`\bshared\s+(types?|interfaces?|models?)\s+(first|before)\b|\b(start\s+with|begin\s+with|first\s+(handle|define|do|create))\s+(the\s+)?shared\s+(types?|interfaces?)\b|\b(common|shared)\s+types\s+up\s+front\b`,
		`先(处理|定义|完成)?(共享|公共)(类型|接口)|(共享|公共)类型(优先|先行)`),
	strategy("separate-api-routes", "Separate API routes", "分离API路由",
		`\bseparat(e|ely|ing)\s+(the\s+)?api(\s+(routes?|endpoints?|handlers?|layer))?\b|\bapi(\s+(routes?|endpoints?|handlers?))?\s+(separately|in\s+(a\s+)?separate|as\s+(a\s+)?separate|on\s+their\s+own)\b`,
		`(分离|拆分|单独(处理)?)\s*API\s*(路由|接口|端点)?|API\s*(路由|接口)\s*(单独|分离)`),
	strategy("tests-alongside", "Tests alongside implementation", "测试与实现一起",
		`\btests?\s+(alongside|together\s+with|along\s+with|next\s+to|with)\s+(the\s+|its\s+|their\s+)?(implementation|code|changes?)\b|\b(implementation|code)\s+(and|with|plus)\s+(its\s+|their\s+)?tests\s+(together|in\s+the\s+same\s+(sub-?)?task)\b`,
		`测试(与|和|跟)实现(一起|同步|放在一起)|实现(与|和)测试(一起|同时)`),
	strategy("tests-separate", "Tests in separate subtask", "测试在单独子任务中",
		`\btests?\s+(in|as)\s+(a\s+)?separate\s+(sub-?)?tasks?\b|\bseparate\s+(test|testing)\s+(sub-?)?tasks?\b|\bdedicated\s+(test|testing)\s+(sub-?)?tasks?\b`,
		`测试(放)?在单独(的)?子任务|单独(的)?测试子任务|测试(作为|单独)(一个)?(独立|单独)?子任务`),
	strategy("maximize-parallel", "Maximize parallelization", "最大化并行化",
		`\bmaximi[sz]e\s+parallel\w*|\b(run|do|execute)?\s*(all|everything)\s+(of\s+them\s+)?in\s+parallel\b|\bparallel(ize|ise)\s+(all|everything)\b|\bas\s+parallel\s+as\s+possible\b`,
		`最大(化|程度)?(地)?并行|全部并行|尽(可能|量)并行`),
	strategy("sequential-order", "Sequential execution order", "顺序执行顺序",
		`\bsequential(ly)?\b|\bin\s+sequence\b|\bone\s+after\s+(another|the\s+other)\b|\bstep\s+by\s+step\s+in\s+order\b`,
		`顺序执行|按顺序|依次(执行|完成)|串行`),
	strategy("respect-dependencies", "Respect dependency chain", "尊重依赖链",
		`\brespect(ing)?\s+(the\s+)?(dependenc(y|ies)|deps)\b|\bdependenc(y|ies)\s+(chain|order|graph)\b|\b(topological|dependency)\s+order\b`,
		`尊重依赖|依赖链|依赖(顺序|关系顺序)|按依赖`),
}

// Extracted is a strategy found in a description, labelled in the language
// of the phrasing that matched it.
type Extracted struct {
	Strategy
	Language Locale `json:"language"`
	Match    string `json:"match"`
}

// ExtractPatterns detects the seed's strategies in a decomposition
// description, in English and Chinese phrasings, case-insensitively. Results
// follow the strategies' fixed order, one per strategy.
func ExtractPatterns(description string) []Extracted {
	var out []Extracted
	for _, s := range Strategies {
		if m := s.zh.FindString(description); m != "" {
			out = append(out, Extracted{Strategy: s, Language: LocaleZH, Match: m})
		} else if m := s.en.FindString(description); m != "" {
			out = append(out, Extracted{Strategy: s, Language: LocaleEN, Match: strings.TrimSpace(m)})
		}
	}
	return out
}

// Labels returns each extraction's label in the language it was found in,
// the seed's return shape.
func Labels(ex []Extracted) []string {
	out := make([]string, len(ex))
	for i, e := range ex {
		out[i] = e.LabelFor(e.Language)
	}
	return out
}

// StrategyByLabel finds a strategy by its English or Chinese label (by
// ContentKey), or by its key.
func StrategyByLabel(s string) (Strategy, bool) {
	k := ContentKey(s)
	for _, st := range Strategies {
		if k == st.keys[0] || k == st.keys[1] || k == st.keys[2] {
			return st, true
		}
	}
	return Strategy{}, false
}
