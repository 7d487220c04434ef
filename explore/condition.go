package explore

import (
	"math"
	"strconv"
	"strings"
)

// CondKind says what a Condition node does.
type CondKind string

// Condition kinds. The zero kind is CondFalse, so the zero Condition never holds.
const (
	CondFalse   CondKind = ""        // never holds
	CondTrue    CondKind = "true"    // always holds
	CondAll     CondKind = "all"     // every term holds (and)
	CondAny     CondKind = "any"     // at least one term holds (or)
	CondNot     CondKind = "not"     // the single term does not hold
	CondCompare CondKind = "compare" // Compare holds
)

// Condition is a predicate over the tracker's metrics and budget, kept as data
// so built-in and TOML strategies have exactly the same power. Its text form
// (see ParseCondition) is what TOML files and JSON snapshots contain:
//
//	submit_count > 0 or search_rounds_in_phase >= search_budget
//	iteration >= 0.4*max_iterations and rounds_since_new_info >= 2
//
// The zero Condition is "false".
type Condition struct {
	Kind    CondKind
	Terms   []Condition // operands of CondAll, CondAny, CondNot
	Compare Comparison  // used by CondCompare
}

// CompareOp is a comparison operator: >=, >, <=, <, == or !=.
type CompareOp string

// Comparison compares two terms.
type Comparison struct {
	Left  Term
	Op    CompareOp
	Right Term
}

// Term is a number, or a metric or budget value optionally scaled and offset:
// Scale*Name+Offset. A scaled value is floored before the offset is added, so
// "0.4*max_iterations" is floor(0.4·24) = 9 with the default budget. With an
// empty Name the term is the constant Offset. Scale 0 means no scaling.
type Term struct {
	Name   string
	Scale  float64
	Offset float64
}

// True is the condition that always holds.
var True = Condition{Kind: CondTrue}

// Cmp builds the comparison "name op value".
func Cmp(name string, op CompareOp, value float64) Condition {
	return Condition{Kind: CondCompare, Compare: Comparison{Left: Term{Name: name}, Op: op, Right: Term{Offset: value}}}
}

// All is the conjunction of terms.
func All(terms ...Condition) Condition { return Condition{Kind: CondAll, Terms: terms} }

// Any is the disjunction of terms.
func Any(terms ...Condition) Condition { return Condition{Kind: CondAny, Terms: terms} }

const (
	maxConditionLen   = 2048
	maxConditionDepth = 24
)

// ParseCondition parses the text form of a condition:
//
//	expr    = and { ("or" | "||") and }
//	and     = unary { ("and" | "&&") unary }
//	unary   = ("not" | "!") unary | "(" expr ")" | "true" | "false" | term op term
//	op      = ">=" | ">" | "<=" | "<" | "==" | "!="
//	term    = number | [number "*"] name [("+" | "-") number]
//
// Names are metric or budget names (see MetricNames and BudgetNames); they are
// checked when a strategy is validated, not here. Errors are *ConditionError.
func ParseCondition(s string) (Condition, error) {
	if len(s) > maxConditionLen {
		return Condition{}, &ConditionError{Input: s[:64] + "…", Pos: maxConditionLen, Msg: "condition too long"}
	}
	p := &condParser{in: s}
	if err := p.lex(); err != nil {
		return Condition{}, err
	}
	if len(p.toks) == 0 {
		return Condition{}, p.errAt(0, "empty condition")
	}
	c, err := p.expr(0)
	if err != nil {
		return Condition{}, err
	}
	if p.i < len(p.toks) {
		return Condition{}, p.errAt(p.toks[p.i].pos, "unexpected "+strconv.Quote(p.toks[p.i].text))
	}
	return c, nil
}

// MustParseCondition is ParseCondition for condition literals in Go code; it
// panics on error, like regexp.MustCompile. Never use it on user input.
func MustParseCondition(s string) Condition {
	c, err := ParseCondition(s)
	if err != nil {
		panic(err)
	}
	return c
}

// MarshalText returns the text form, so conditions read naturally in JSON.
func (c Condition) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses the text form.
func (c *Condition) UnmarshalText(b []byte) error {
	parsed, err := ParseCondition(string(b))
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// String returns the canonical text form; ParseCondition(c.String()) yields an
// equal condition.
func (c Condition) String() string {
	var b strings.Builder
	c.write(&b)
	return b.String()
}

func (c Condition) write(b *strings.Builder) {
	switch c.Kind {
	case CondTrue:
		b.WriteString("true")
	case CondAll, CondAny:
		if len(c.Terms) == 0 {
			if c.Kind == CondAll {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
			return
		}
		sep := " and "
		if c.Kind == CondAny {
			sep = " or "
		}
		for i, t := range c.Terms {
			if i > 0 {
				b.WriteString(sep)
			}
			t.writeOperand(b, len(c.Terms) > 1)
		}
	case CondNot:
		b.WriteString("not ")
		if len(c.Terms) != 1 {
			b.WriteString("false")
			return
		}
		c.Terms[0].writeOperand(b, true)
	case CondCompare:
		c.Compare.Left.write(b)
		b.WriteByte(' ')
		b.WriteString(string(c.Compare.Op))
		b.WriteByte(' ')
		c.Compare.Right.write(b)
	default:
		b.WriteString("false")
	}
}

// writeOperand writes c, in parentheses when it is a compound that would
// otherwise bind differently.
func (c Condition) writeOperand(b *strings.Builder, paren bool) {
	compound := (c.Kind == CondAll || c.Kind == CondAny) && len(c.Terms) > 0
	if compound && paren {
		b.WriteByte('(')
		c.write(b)
		b.WriteByte(')')
		return
	}
	c.write(b)
}

func (t Term) write(b *strings.Builder) {
	if t.Name == "" {
		b.WriteString(formatNumber(t.Offset))
		return
	}
	if t.Scale != 0 {
		b.WriteString(formatNumber(t.Scale))
		b.WriteByte('*')
	}
	b.WriteString(t.Name)
	switch {
	case t.Offset > 0:
		b.WriteString(" + ")
		b.WriteString(formatNumber(t.Offset))
	case t.Offset < 0:
		b.WriteString(" - ")
		b.WriteString(formatNumber(-t.Offset))
	}
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// valuer resolves metric and budget names.
type valuer interface{ value(name string) float64 }

func (c *Condition) holds(env valuer) bool {
	switch c.Kind {
	case CondTrue:
		return true
	case CondAll:
		for i := range c.Terms {
			if !c.Terms[i].holds(env) {
				return false
			}
		}
		return true
	case CondAny:
		for i := range c.Terms {
			if c.Terms[i].holds(env) {
				return true
			}
		}
		return false
	case CondNot:
		return len(c.Terms) == 1 && !c.Terms[0].holds(env)
	case CondCompare:
		l, r := c.Compare.Left.eval(env), c.Compare.Right.eval(env)
		switch c.Compare.Op {
		case ">=":
			return l >= r
		case ">":
			return l > r
		case "<=":
			return l <= r
		case "<":
			return l < r
		case "==":
			return l == r
		case "!=":
			return l != r
		}
	}
	return false
}

func (t Term) eval(env valuer) float64 {
	if t.Name == "" {
		return t.Offset
	}
	v := env.value(t.Name)
	if t.Scale != 0 {
		v = math.Floor(t.Scale * v)
	}
	return v + t.Offset
}

// names calls f for every metric or budget name the condition uses.
func (c *Condition) names(f func(string)) {
	switch c.Kind {
	case CondCompare:
		for _, t := range [2]Term{c.Compare.Left, c.Compare.Right} {
			if t.Name != "" {
				f(t.Name)
			}
		}
	default:
		for i := range c.Terms {
			c.Terms[i].names(f)
		}
	}
}

// check reports structural problems of a Go-built condition (parsed ones are
// always well formed).
func (c *Condition) check() string {
	switch c.Kind {
	case CondFalse, CondTrue:
	case CondAll, CondAny:
	case CondNot:
		if len(c.Terms) != 1 {
			return "not needs exactly one term"
		}
	case CondCompare:
		switch c.Compare.Op {
		case ">=", ">", "<=", "<", "==", "!=":
		default:
			return "unknown comparison operator " + strconv.Quote(string(c.Compare.Op))
		}
		for _, t := range [2]Term{c.Compare.Left, c.Compare.Right} {
			if !isFinite(t.Scale) || !isFinite(t.Offset) {
				return "number is not finite"
			}
		}
	default:
		return "unknown condition kind " + strconv.Quote(string(c.Kind))
	}
	for i := range c.Terms {
		if msg := c.Terms[i].check(); msg != "" {
			return msg
		}
	}
	return ""
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ── parser ──────────────────────────────────────────────────────────────

type condToken struct {
	kind byte // 'n' number, 'i' identifier, 'o' operator/punctuation
	text string
	pos  int
}

type condParser struct {
	in   string
	toks []condToken
	i    int
}

func (p *condParser) errAt(pos int, msg string) error {
	return &ConditionError{Input: p.in, Pos: pos, Msg: msg}
}

func (p *condParser) lex() error {
	s := p.in
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			p.toks = append(p.toks, condToken{'n', s[i:j], i})
			i = j
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			p.toks = append(p.toks, condToken{'i', s[i:j], i})
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch two {
			case ">=", "<=", "==", "!=", "&&", "||":
				p.toks = append(p.toks, condToken{'o', two, i})
				i += 2
				continue
			}
			switch c {
			case '>', '<', '(', ')', '*', '+', '-', '!':
				p.toks = append(p.toks, condToken{'o', s[i : i+1], i})
				i++
			default:
				return p.errAt(i, "unexpected character "+strconv.QuoteRune(rune(c)))
			}
		}
	}
	return nil
}

func (p *condParser) peek() (condToken, bool) {
	if p.i < len(p.toks) {
		return p.toks[p.i], true
	}
	return condToken{}, false
}

func (p *condParser) pos() int {
	if t, ok := p.peek(); ok {
		return t.pos
	}
	return len(p.in)
}

func (p *condParser) accept(words ...string) bool {
	t, ok := p.peek()
	if !ok {
		return false
	}
	for _, w := range words {
		if t.text == w {
			p.i++
			return true
		}
	}
	return false
}

func (p *condParser) expr(depth int) (Condition, error) {
	if depth > maxConditionDepth {
		return Condition{}, p.errAt(p.pos(), "condition nested too deeply")
	}
	first, err := p.and(depth)
	if err != nil {
		return Condition{}, err
	}
	terms := []Condition{first}
	for p.accept("or", "||") {
		next, err := p.and(depth)
		if err != nil {
			return Condition{}, err
		}
		terms = append(terms, next)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return Condition{Kind: CondAny, Terms: terms}, nil
}

func (p *condParser) and(depth int) (Condition, error) {
	first, err := p.unary(depth)
	if err != nil {
		return Condition{}, err
	}
	terms := []Condition{first}
	for p.accept("and", "&&") {
		next, err := p.unary(depth)
		if err != nil {
			return Condition{}, err
		}
		terms = append(terms, next)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return Condition{Kind: CondAll, Terms: terms}, nil
}

func (p *condParser) unary(depth int) (Condition, error) {
	if depth > maxConditionDepth {
		return Condition{}, p.errAt(p.pos(), "condition nested too deeply")
	}
	if p.accept("not", "!") {
		inner, err := p.unary(depth + 1)
		if err != nil {
			return Condition{}, err
		}
		return Condition{Kind: CondNot, Terms: []Condition{inner}}, nil
	}
	if p.accept("(") {
		inner, err := p.expr(depth + 1)
		if err != nil {
			return Condition{}, err
		}
		if !p.accept(")") {
			return Condition{}, p.errAt(p.pos(), "missing )")
		}
		return inner, nil
	}
	if p.accept("true") {
		return True, nil
	}
	if p.accept("false") {
		return Condition{}, nil
	}
	left, err := p.term()
	if err != nil {
		return Condition{}, err
	}
	t, ok := p.peek()
	var op CompareOp
	if ok {
		switch t.text {
		case ">=", ">", "<=", "<", "==", "!=":
			op = CompareOp(t.text)
			p.i++
		}
	}
	if op == "" {
		return Condition{}, p.errAt(p.pos(), "expected a comparison operator (>=, >, <=, <, ==, !=)")
	}
	right, err := p.term()
	if err != nil {
		return Condition{}, err
	}
	return Condition{Kind: CondCompare, Compare: Comparison{Left: left, Op: op, Right: right}}, nil
}

// term = number | [number "*"] name [("+"|"-") number]
func (p *condParser) term() (Term, error) {
	num, isNum, err := p.number()
	if err != nil {
		return Term{}, err
	}
	var t Term
	if isNum {
		if !p.accept("*") {
			return Term{Offset: num}, nil
		}
		if num == 0 {
			return Term{}, p.errAt(p.pos(), "scale must not be 0")
		}
		t.Scale = num
	}
	tok, ok := p.peek()
	if !ok || tok.kind != 'i' || isKeyword(tok.text) {
		return Term{}, p.errAt(p.pos(), "expected a number or a metric name")
	}
	p.i++
	t.Name = tok.text
	sign := 0.0
	switch {
	case p.accept("+"):
		sign = 1
	case p.accept("-"):
		sign = -1
	}
	if sign != 0 {
		off, isNum, err := p.number()
		if err != nil {
			return Term{}, err
		}
		if !isNum {
			return Term{}, p.errAt(p.pos(), "expected a number after + or -")
		}
		t.Offset = sign * off
	}
	return t, nil
}

// number parses an optionally negative decimal number.
func (p *condParser) number() (float64, bool, error) {
	start := p.i
	neg := false
	if t, ok := p.peek(); ok && t.text == "-" {
		neg = true
		p.i++
	}
	t, ok := p.peek()
	if !ok || t.kind != 'n' {
		if neg {
			return 0, false, p.errAt(p.pos(), "expected a number after -")
		}
		p.i = start
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil || !isFinite(v) {
		return 0, false, p.errAt(t.pos, "bad number "+strconv.Quote(t.text))
	}
	p.i++
	if neg {
		v = -v
	}
	return v, true, nil
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "true", "false":
		return true
	}
	return false
}
