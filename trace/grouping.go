package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// GroupingVersion is the version of the error normalisation. It is recorded
// in every signature, group and failure pattern; when the normalisation
// changes it is raised, and existing groups keep matching through their
// looser hashes and the similarity search (see Grouper).
const GroupingVersion = 1

// Signature is the fingerprint of one error output.
type Signature struct {
	// Version of the normalisation that produced it.
	Version int `json:"version"`
	// Lang is the ecosystem detected (go, python, node, rust, java,
	// shell, db, generic).
	Lang string `json:"lang"`
	// Type is the error type, "<ecosystem>:<name>": "python:KeyError",
	// "go:panic", "ts:TS2345", "rust:E0308", "java:NullPointerException",
	// "postgres:42P01", "mysql:1146", "shell:command_not_found"…
	Type string `json:"type"`
	// Message is the masked key message (lowercase).
	Message string `json:"message"`
	// Frame is the first frame in the project's own code, when it is part
	// of the key (code defects; empty for environment failures).
	Frame Frame `json:"frame"`
	// Strict hashes type, message and frame file.
	Strict string `json:"strict"`
	// Loose hashes type, frame file and the message's stable words only
	// (no placeholders, numbers or paths), so it survives changes of the
	// masks.
	Loose string `json:"loose"`
	// Excerpt is the error line(s) as printed, for people.
	Excerpt string `json:"excerpt"`
}

// Hashes returns the signature's hashes (strict first).
func (s Signature) Hashes() []string { return []string{s.Strict, s.Loose} }

// GroupConfig configures error grouping. Zero values are not defaults:
// start from DefaultGroupConfig.
type GroupConfig struct {
	// Version recorded on new groups (default GroupingVersion).
	Version int `toml:"version" json:"version"`
	// DrainSimilarity: a message joins a template when at least this share
	// of its tokens agree (default 0.7).
	DrainSimilarity float64 `toml:"drain_similarity" json:"drain_similarity"`
	// DrainDepth: leading tokens used to route a message (default 2).
	DrainDepth int `toml:"drain_depth" json:"drain_depth"`
	// DrainMaxChildren per tree node before new tokens share a wildcard
	// branch (default 64).
	DrainMaxChildren int `toml:"drain_max_children" json:"drain_max_children"`
	// DrainMaxTokens of a message taken into account (default 48).
	DrainMaxTokens int `toml:"drain_max_tokens" json:"drain_max_tokens"`
	// SimilarityThreshold: token Jaccard similarity at or above which an
	// error joins a group of the same type once every hash missed
	// (default 0.6).
	SimilarityThreshold float64 `toml:"similarity_threshold" json:"similarity_threshold"`
	// MaxGroups kept; the least recently seen are evicted (default 5000).
	MaxGroups int `toml:"max_groups" json:"max_groups"`
	// MaxExamples of error excerpts kept per group (default 3).
	MaxExamples int `toml:"max_examples" json:"max_examples"`
	// MaxHashes kept per group (default 32).
	MaxHashes int `toml:"max_hashes" json:"max_hashes"`
	// Masks selects the masks (all by default).
	Masks MaskConfig `toml:"masks" json:"masks"`
}

// DefaultGroupConfig returns the defaults documented on GroupConfig.
func DefaultGroupConfig() GroupConfig {
	return GroupConfig{Version: GroupingVersion, DrainSimilarity: 0.7, DrainDepth: 2, DrainMaxChildren: 64, DrainMaxTokens: 48,
		SimilarityThreshold: 0.6, MaxGroups: 5000, MaxExamples: 3, MaxHashes: 32}
}

// Validate checks the ranges.
func (c GroupConfig) Validate() error {
	const obj = "grouping"
	switch {
	case c.Version < 1:
		return invalid(ErrInvalidConfig, obj, "version", "is %d, versions start at 1", c.Version)
	case !(c.DrainSimilarity > 0 && c.DrainSimilarity <= 1):
		return invalid(ErrInvalidConfig, obj, "drain_similarity", "is %v, want (0, 1]", c.DrainSimilarity)
	case c.DrainDepth < 0 || c.DrainDepth > 8:
		return invalid(ErrInvalidConfig, obj, "drain_depth", "is %d, want 0..8", c.DrainDepth)
	case c.DrainMaxChildren < 1:
		return invalid(ErrInvalidConfig, obj, "drain_max_children", "is %d, want ≥ 1", c.DrainMaxChildren)
	case c.DrainMaxTokens < 1 || c.DrainMaxTokens > 1024:
		return invalid(ErrInvalidConfig, obj, "drain_max_tokens", "is %d, want 1..1024", c.DrainMaxTokens)
	case !(c.SimilarityThreshold > 0 && c.SimilarityThreshold <= 1):
		return invalid(ErrInvalidConfig, obj, "similarity_threshold", "is %v, want (0, 1]", c.SimilarityThreshold)
	case c.MaxGroups < 1:
		return invalid(ErrInvalidConfig, obj, "max_groups", "is %d, want ≥ 1", c.MaxGroups)
	case c.MaxExamples < 0 || c.MaxExamples > MaxExampleErrors:
		return invalid(ErrInvalidConfig, obj, "max_examples", "is %d, want 0..%d", c.MaxExamples, MaxExampleErrors)
	case c.MaxHashes < 3:
		return invalid(ErrInvalidConfig, obj, "max_hashes", "is %d, want ≥ 3", c.MaxHashes)
	}
	for _, m := range c.Masks.Disabled {
		known := false
		for _, k := range AllMasks {
			known = known || k == m
		}
		if !known {
			return invalid(ErrInvalidConfig, obj, "masks.disabled", "unknown mask %q", m)
		}
	}
	return nil
}

// Fingerprint computes the signature of an error output. command (may be
// empty) is the command that produced it; its family is a prior for the
// ecosystem when the output alone is ambiguous.
//
// Steps: detect the error type per ecosystem and its key message (Go panics,
// `--- FAIL`, compile errors; Python's last exception line, pytest, mypy,
// ruff; TypeScript TSxxxx, Node errors with `cause`, Jest/Vitest, ESLint,
// npm codes; Rust error[Exxxx] with its first label, panics, clippy lints;
// Java root causes (`Caused by`), javac/Maven compile errors; shell
// `command not found`, errno messages, signals, make, git, ssh, curl,
// docker; database conditions of PostgreSQL (SQLSTATE), MySQL and SQLite,
// and Alembic), take the first frame in the project's own code, mask
// volatile tokens (Mask), and hash.
func Fingerprint(output, command string) Signature {
	return fingerprint(output, command, DefaultGroupConfig())
}

func fingerprint(output, command string, cfg GroupConfig) Signature {
	f := analyze(output, command)
	msg := maskWith(f.msg, f.values, cfg.Masks)
	if msg == "" {
		msg = "<empty>"
	}
	sig := Signature{Version: cfg.Version, Lang: f.lang, Type: f.typ, Message: msg, Excerpt: f.raw}
	if f.keyFrame {
		sig.Frame = f.frame
	}
	sig.Strict = hashOf("s", f.typ, msg, sig.Frame.File)
	sig.Loose = hashOf("l", f.typ, looseWords(msg), sig.Frame.File)
	return sig
}

func hashOf(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return kind + ":" + hex.EncodeToString(h.Sum(nil))[:16]
}

// looseWords keeps the stable words of a masked message: no placeholders,
// nothing with digits, no paths, no punctuation around words.
func looseWords(msg string) string {
	var out []string
	for _, t := range strings.Fields(msg) {
		if strings.Contains(t, "<") || strings.ContainsAny(t, "0123456789") || isPathWord(strings.Trim(t, `'"`+"`")) {
			continue
		}
		w := strings.Trim(t, ".,;:!?()[]{}'\"`|")
		w = strings.NewReplacer("'", "", "\"", "", "`", "").Replace(w)
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// Group is one group of errors that are the same failure.
type Group struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Frame string `json:"frame,omitempty"`
	// Template is the mined message template (with <*> wildcards).
	Template string `json:"template"`
	// Hashes that lead to the group (strict, template, loose, of every
	// normalisation version that produced them).
	Hashes    []string  `json:"hashes"`
	Count     int       `json:"count"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Examples  []string  `json:"examples,omitempty"`
	// Version of the normalisation that created the group.
	Version int `json:"version"`
	Cluster int `json:"cluster"`
	Seq     int `json:"seq"`
	// tokens of the group's first message, for the similarity search.
	Tokens []string `json:"tokens"`
}

// Match kinds of an Assignment.
const (
	MatchStrict     = "strict"
	MatchTemplate   = "template"
	MatchLoose      = "loose"
	MatchSimilarity = "similarity"
	MatchNew        = "new"
)

// Assignment says which group an error joined and how it was found.
type Assignment struct {
	GroupID string `json:"group_id"`
	New     bool   `json:"new"`
	// MatchedBy is strict, template, loose, similarity or new.
	MatchedBy string `json:"matched_by"`
	// Similarity of the similarity search (0 otherwise).
	Similarity float64   `json:"similarity,omitempty"`
	Template   string    `json:"template"`
	Signature  Signature `json:"signature"`
}

// Signatures returns the identifiers of the assigned error to store on an
// Attempt or a FailurePattern: the group id and the signature's hashes.
func (a Assignment) Signatures() []string {
	return []string{a.GroupID, a.Signature.Strict, a.Signature.Loose}
}

// Grouper groups errors online. Lookup order: the strict hash, then the
// hash of the mined template (Drain), then the loose hash; only when every
// hash missed, a similarity search (token Jaccard) among groups of the same
// type and frame; else a new group. Every hash an error reached is added to
// its group, so groups created under an older normalisation keep
// collecting errors. A Grouper is not safe for concurrent use; its state
// is saved with MarshalJSON and restored with RestoreGrouper.
type Grouper struct {
	cfg    GroupConfig
	groups map[string]*Group
	index  map[string]string // hash → group id
	byType map[string][]string
	drain  *drain
	seq    int
}

// NewGrouper returns an empty grouper.
func NewGrouper(cfg GroupConfig) (*Grouper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Grouper{cfg: cfg, groups: map[string]*Group{}, index: map[string]string{}, byType: map[string][]string{}, drain: newDrain(cfg)}, nil
}

// Len returns the number of groups.
func (g *Grouper) Len() int { return len(g.groups) }

// Group returns a copy of a group.
func (g *Grouper) Group(id string) (Group, bool) {
	gr, ok := g.groups[id]
	if !ok {
		return Group{}, false
	}
	return cloneGroup(gr), true
}

// Groups returns copies of every group, ordered by id.
func (g *Grouper) Groups() []Group {
	out := make([]Group, 0, len(g.groups))
	for _, id := range sortedKeys(g.groups) {
		out = append(out, cloneGroup(g.groups[id]))
	}
	return out
}

func cloneGroup(gr *Group) Group {
	c := *gr
	c.Hashes = append([]string(nil), gr.Hashes...)
	c.Examples = append([]string(nil), gr.Examples...)
	c.Tokens = append([]string(nil), gr.Tokens...)
	return c
}

func (g *Grouper) templateHash(typ string, tokens []string, frame string) string {
	return hashOf("t", typ, strings.Join(tokens, " "), frame)
}

// Lookup finds the group of an error without learning anything.
func (g *Grouper) Lookup(output, command string) (Assignment, bool) {
	sig := fingerprint(output, command, g.cfg)
	a := g.find(sig)
	return a, a.GroupID != ""
}

func (g *Grouper) find(sig Signature) Assignment {
	a := Assignment{Signature: sig}
	toks := g.drain.tokenize(sig.Message)
	if id, ok := g.index[sig.Strict]; ok {
		a.GroupID, a.MatchedBy = id, MatchStrict
	} else if c := g.drain.search(sig.Type, toks); c != nil && g.index[g.templateHash(sig.Type, c.Tokens, sig.Frame.File)] != "" {
		a.GroupID, a.MatchedBy = g.index[g.templateHash(sig.Type, c.Tokens, sig.Frame.File)], MatchTemplate
	} else if id, ok := g.index[sig.Loose]; ok {
		a.GroupID, a.MatchedBy = id, MatchLoose
	} else if id, s := g.similar(sig, toks); id != "" {
		a.GroupID, a.MatchedBy, a.Similarity = id, MatchSimilarity, s
	}
	if a.GroupID != "" {
		a.Template = g.groups[a.GroupID].Template
	}
	return a
}

// similar returns the most similar group of the same type (and frame, when
// both have one) with equal key tokens, if its Jaccard similarity reaches
// the threshold. A group created under another normalisation version also
// matches when one message generalises the other: they agree except where
// one has a placeholder (<str>, <num>…) that the other's version did not
// write, so a normaliser that masks more (or less) finds the old groups.
func (g *Grouper) similar(sig Signature, toks []string) (string, float64) {
	qset, qkeys := tokenSets(toks)
	best, bestSim := "", 0.0
	for _, id := range g.byType[sig.Type] {
		gr := g.groups[id]
		if gr.Frame != "" && sig.Frame.File != "" && gr.Frame != sig.Frame.File {
			continue
		}
		s := 0.0
		if gr.Version != g.cfg.Version && (generalises(toks, gr.Tokens) || generalises(gr.Tokens, toks)) {
			s = 1
		} else {
			gset, gkeys := tokenSets(gr.Tokens)
			if !sameSet(qkeys, gkeys) {
				continue
			}
			s = jaccard(qset, gset)
		}
		if s > bestSim || s == bestSim && best != "" && gr.Seq < g.groups[best].Seq {
			best, bestSim = id, s
		}
	}
	if best == "" || bestSim < g.cfg.SimilarityThreshold {
		return "", 0
	}
	return best, bestSim
}

// generalises reports whether pattern matches toks when each placeholder
// token of pattern stands for the token at its place, and a lone <str>
// (a masked quoted text, which may have held spaces) for one or more
// tokens.
func generalises(pattern, toks []string) bool {
	if len(pattern) > 64 || len(toks) > 64 {
		return false
	}
	// dp[i][j]: pattern[i:] matches toks[j:]
	var dp [65][65]bool
	dp[len(pattern)][len(toks)] = true
	for i := len(pattern) - 1; i >= 0; i-- {
		p := pattern[i]
		str := strings.Trim(p, ".,;:()[]") == "<str>"
		wild := strings.Contains(p, "<") && strings.Contains(p, ">")
		for j := len(toks) - 1; j >= 0; j-- {
			switch {
			case str:
				// absorb toks[j], then stop or go on absorbing
				dp[i][j] = dp[i+1][j+1] || dp[i][j+1]
			case wild:
				dp[i][j] = dp[i+1][j+1]
			default:
				dp[i][j] = p == toks[j] && dp[i+1][j+1]
			}
		}
	}
	return dp[0][0]
}

func tokenSets(toks []string) (all, keys map[string]bool) {
	all, keys = map[string]bool{}, map[string]bool{}
	for _, t := range toks {
		all[t] = true
		if isKeyToken(t) {
			keys[t] = true
		}
	}
	return all, keys
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// Assign groups an error and learns from it. now is the time it was seen.
func (g *Grouper) Assign(output, command string, now time.Time) Assignment {
	sig := fingerprint(output, command, g.cfg)
	a := g.find(sig)
	toks := g.drain.tokenize(sig.Message)
	var gr *Group
	if a.GroupID == "" {
		g.seq++
		id := "g-" + strings.TrimPrefix(sig.Strict, "s:")[:12]
		for n := 2; g.groups[id] != nil; n++ {
			id = fmt.Sprintf("g-%s-%d", strings.TrimPrefix(sig.Strict, "s:")[:12], n)
		}
		gr = &Group{ID: id, Type: sig.Type, Frame: sig.Frame.File, FirstSeen: now, Version: g.cfg.Version, Seq: g.seq, Tokens: toks}
		g.groups[id] = gr
		g.byType[sig.Type] = append(g.byType[sig.Type], id)
		a.GroupID, a.New, a.MatchedBy = id, true, MatchNew
	} else {
		gr = g.groups[a.GroupID]
	}
	gr.Count++
	if now.After(gr.LastSeen) {
		gr.LastSeen = now
	}
	if g.cfg.MaxExamples > 0 && sig.Excerpt != "" && !contains(gr.Examples, sig.Excerpt) {
		gr.Examples = append(gr.Examples, Truncate(sig.Excerpt, MaxExampleLen))
		if len(gr.Examples) > g.cfg.MaxExamples {
			gr.Examples = gr.Examples[len(gr.Examples)-g.cfg.MaxExamples:]
		}
	}
	// learn the template; re-register the hashes of every group whose
	// cluster template changed.
	c, changed := g.drain.add(sig.Type, toks)
	if !contains(c.Groups, gr.ID) {
		c.Groups = append(c.Groups, gr.ID)
	}
	if gr.Cluster == 0 {
		gr.Cluster = c.ID
	}
	if gr.Cluster == c.ID {
		gr.Template = c.template()
	}
	g.register(gr, sig.Strict)
	g.register(gr, sig.Loose)
	g.register(gr, g.templateHash(sig.Type, c.Tokens, gr.Frame))
	if changed {
		for _, id := range c.Groups {
			if other := g.groups[id]; other != nil {
				g.register(other, g.templateHash(c.Type, c.Tokens, other.Frame))
				if other.Cluster == c.ID {
					other.Template = c.template()
				}
			}
		}
	}
	a.Template = gr.Template
	g.evict()
	return a
}

// register points a hash at a group unless another group holds it already
// (the first group to claim a hash keeps it).
func (g *Grouper) register(gr *Group, h string) {
	if _, taken := g.index[h]; taken {
		return
	}
	if len(gr.Hashes) >= g.cfg.MaxHashes {
		return
	}
	g.index[h] = gr.ID
	gr.Hashes = append(gr.Hashes, h)
}

func (g *Grouper) evict() {
	for len(g.groups) > g.cfg.MaxGroups {
		var victim *Group
		for _, id := range sortedKeys(g.groups) {
			gr := g.groups[id]
			if victim == nil || gr.LastSeen.Before(victim.LastSeen) || gr.LastSeen.Equal(victim.LastSeen) && gr.Seq < victim.Seq {
				victim = gr
			}
		}
		g.drop(victim)
	}
}

func (g *Grouper) drop(gr *Group) {
	delete(g.groups, gr.ID)
	for _, h := range gr.Hashes {
		if g.index[h] == gr.ID {
			delete(g.index, h)
		}
	}
	ids := g.byType[gr.Type]
	for i, id := range ids {
		if id == gr.ID {
			g.byType[gr.Type] = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(g.byType[gr.Type]) == 0 {
		delete(g.byType, gr.Type)
	}
	for _, c := range g.drain.sortedClusters() {
		for i, id := range c.Groups {
			if id == gr.ID {
				c.Groups = append(c.Groups[:i:i], c.Groups[i+1:]...)
				break
			}
		}
		if len(c.Groups) == 0 {
			g.drain.remove(c.ID)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// grouperState is the serialised form of a Grouper.
type grouperState struct {
	Version  int        `json:"version"`
	Seq      int        `json:"seq"`
	Groups   []Group    `json:"groups"`
	Clusters []*cluster `json:"clusters"`
}

// MarshalJSON serialises the grouper's state (groups and mined templates;
// indexes are rebuilt on restore). The output is deterministic.
func (g *Grouper) MarshalJSON() ([]byte, error) {
	st := grouperState{Version: g.cfg.Version, Seq: g.seq, Groups: g.Groups(), Clusters: g.drain.sortedClusters()}
	return json.Marshal(st)
}

// RestoreGrouper rebuilds a grouper from MarshalJSON output. cfg may carry
// a newer normalisation (Version) than the state: groups keep their hashes
// and versions, and errors normalised the new way find them through the
// template, loose and similarity lookups, then add their new hashes.
func RestoreGrouper(data []byte, cfg GroupConfig) (*Grouper, error) {
	g, err := NewGrouper(cfg)
	if err != nil {
		return nil, err
	}
	var st grouperState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, &ValidationError{Object: "grouper", Msg: err.Error(), Err: ErrInvalidState}
	}
	if st.Version < 1 {
		return nil, invalid(ErrInvalidState, "grouper", "version", "is %d", st.Version)
	}
	sort.Slice(st.Groups, func(i, j int) bool { return st.Groups[i].Seq < st.Groups[j].Seq })
	for i := range st.Groups {
		gr := st.Groups[i]
		if err := checkID(ErrInvalidState, "grouper.groups", "id", gr.ID, true); err != nil {
			return nil, err
		}
		if g.groups[gr.ID] != nil {
			return nil, invalid(ErrInvalidState, "grouper.groups", "id", "duplicate group %q", gr.ID)
		}
		if gr.Count < 0 || len(gr.Tokens) > 1024 || len(gr.Hashes) > 1024 {
			return nil, invalid(ErrInvalidState, "grouper.groups", gr.ID, "counts or sizes out of range")
		}
		cp := gr
		cp.Hashes = nil
		g.groups[gr.ID] = &cp
		g.byType[gr.Type] = append(g.byType[gr.Type], gr.ID)
		for _, h := range gr.Hashes {
			if _, taken := g.index[h]; !taken {
				g.index[h] = gr.ID
				cp.Hashes = append(cp.Hashes, h)
			}
		}
		if gr.Seq > g.seq {
			g.seq = gr.Seq
		}
	}
	if st.Seq > g.seq {
		g.seq = st.Seq
	}
	for _, c := range st.Clusters {
		if c == nil || c.ID < 1 || len(c.Tokens) == 0 || len(c.Tokens) > 1024 || g.drain.clusters[c.ID] != nil {
			return nil, invalid(ErrInvalidState, "grouper.clusters", "", "bad or duplicate cluster")
		}
		var keep []string
		for _, id := range c.Groups {
			if g.groups[id] != nil {
				keep = append(keep, id)
			}
		}
		c.Groups = keep
		g.drain.insert(c)
	}
	return g, nil
}

// PairwiseScores compares a grouping with gold labels over all pairs of
// items: precision is the share of pairs grouped together that belong
// together, recall the share of pairs that belong together and were
// grouped together. With no such pairs a score is 1.
func PairwiseScores(gold, predicted []string) (precision, recall float64) {
	tp, fp, fn := 0, 0, 0
	for i := range gold {
		for j := i + 1; j < len(gold); j++ {
			same, together := gold[i] == gold[j], predicted[i] == predicted[j]
			switch {
			case same && together:
				tp++
			case together:
				fp++
			case same:
				fn++
			}
		}
	}
	precision, recall = 1, 1
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		recall = float64(tp) / float64(tp+fn)
	}
	return precision, recall
}

// BCubedScores returns B-cubed precision and recall: per item, the share of
// its predicted group with its gold label, and the share of its gold group
// in its predicted group, averaged over items.
func BCubedScores(gold, predicted []string) (precision, recall float64) {
	if len(gold) == 0 {
		return 1, 1
	}
	for i := range gold {
		inPred, inGold, both := 0, 0, 0
		for j := range gold {
			p, gl := predicted[i] == predicted[j], gold[i] == gold[j]
			if p {
				inPred++
			}
			if gl {
				inGold++
			}
			if p && gl {
				both++
			}
		}
		precision += float64(both) / float64(inPred)
		recall += float64(both) / float64(inGold)
	}
	n := float64(len(gold))
	return precision / n, recall / n
}

// F1 is the harmonic mean of precision and recall.
func F1(p, r float64) float64 {
	if p+r == 0 || math.IsNaN(p+r) {
		return 0
	}
	return 2 * p * r / (p + r)
}
