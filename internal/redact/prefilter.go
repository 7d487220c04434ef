package redact

// prefilter finds which rules may match a text: an Aho-Corasick automaton
// over every rule's keywords, matched ASCII-case-insensitively in one pass
// over the bytes. A rule runs only when one of its keywords occurs, so
// text that mentions none of them costs one scan and no regexp.
type prefilter struct {
	class  [256]uint8 // byte (after ASCII lower-casing) to input class
	nclass int
	next   []int32    // DFA transitions: state*nclass + class
	out    [][]uint16 // rules whose keyword ends in a state (incl. via suffixes)
	always []uint16   // rules without keywords
	nrules int
}

// hits lists, per rule, the offsets just past each occurrence of one of
// its keywords, in increasing order; a rule without keywords has one hit
// at 0. A rule with no entry did not occur.
type hits [][]int32

// newPrefilter builds the automaton; keywords[i] are rule i's keywords,
// already lower case. A rule without keywords runs on every text.
func newPrefilter(keywords [][]string) *prefilter {
	p := &prefilter{nrules: len(keywords)}
	// Input classes: one per distinct keyword byte, class 0 for the rest.
	for _, kws := range keywords {
		for _, kw := range kws {
			for i := 0; i < len(kw); i++ {
				c := lower(kw[i])
				if p.class[c] == 0 {
					p.nclass++
					p.class[c] = uint8(p.nclass)
				}
			}
		}
	}
	p.nclass++
	// Trie.
	type node struct {
		child map[uint8]int32
		rules []uint16
	}
	nodes := []node{{child: map[uint8]int32{}}}
	for ri, kws := range keywords {
		if len(kws) == 0 {
			p.always = append(p.always, uint16(ri))
		}
		for _, kw := range kws {
			s := int32(0)
			for i := 0; i < len(kw); i++ {
				c := p.class[lower(kw[i])]
				nx, ok := nodes[s].child[c]
				if !ok {
					nx = int32(len(nodes))
					nodes = append(nodes, node{child: map[uint8]int32{}})
					nodes[s].child[c] = nx
				}
				s = nx
			}
			nodes[s].rules = append(nodes[s].rules, uint16(ri))
		}
	}
	// Breadth-first: failure links become full DFA transitions.
	n := len(nodes)
	p.next = make([]int32, n*p.nclass)
	p.out = make([][]uint16, n)
	fail := make([]int32, n)
	queue := []int32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s != 0 {
			p.out[s] = append(append([]uint16(nil), nodes[s].rules...), p.out[fail[s]]...)
		}
		for c := 0; c < p.nclass; c++ {
			if nx, ok := nodes[s].child[uint8(c)]; ok && c != 0 {
				if s == 0 {
					fail[nx] = 0
				} else {
					fail[nx] = p.next[int(fail[s])*p.nclass+c]
				}
				p.next[int(s)*p.nclass+c] = nx
				queue = append(queue, nx)
			} else if s != 0 {
				p.next[int(s)*p.nclass+c] = p.next[int(fail[s])*p.nclass+c]
			}
		}
	}
	return p
}

// scan returns the keyword hits of every rule in text, or nil when no
// rule has any.
func (p *prefilter) scan(text string) hits {
	var h hits
	add := func(rules []uint16, pos int32) {
		if h == nil {
			h = make(hits, p.nrules)
		}
		for _, r := range rules {
			h[r] = append(h[r], pos)
		}
	}
	if len(p.always) > 0 {
		add(p.always, 0)
	}
	s := int32(0)
	next, class, nclass, out := p.next, &p.class, int32(p.nclass), p.out
	for i := 0; i < len(text); i++ {
		s = next[s*nclass+int32(class[lower(text[i])])]
		if o := out[s]; len(o) > 0 {
			add(o, int32(i+1))
		}
	}
	return h
}

// lower lower-cases an ASCII letter and leaves every other byte alone.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
