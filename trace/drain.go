package trace

import (
	"sort"
	"strings"
)

// Wildcard is the template token that stands for any value.
const Wildcard = "<*>"

// cluster is one mined template (a Drain log cluster). Tokens at which two
// messages of the cluster differed are Wildcard; key tokens (quoted names,
// qualified identifiers, see isKeyToken) never become wildcards, so two
// messages that name different things never share a cluster.
type cluster struct {
	ID     int      `json:"id"`
	Type   string   `json:"type"`
	Tokens []string `json:"tokens"`
	Size   int      `json:"size"`
	// Groups are the error groups whose messages fell into the cluster.
	Groups []string `json:"groups,omitempty"`
}

func (c *cluster) template() string { return strings.Join(c.Tokens, " ") }

// drainNode is a node of the fixed-depth parse tree.
type drainNode struct {
	children map[string]*drainNode
	clusters []int
}

// drain is an online template miner after He et al., "Drain: An Online Log
// Parsing Approach with Fixed Depth Tree" (ICWS 2017): messages are routed
// by error type, token count and their first leading tokens to a leaf, and
// joined to the most similar cluster there when the share of equal tokens
// reaches the similarity threshold; otherwise they start a new cluster.
type drain struct {
	depth       int // leading tokens used for routing
	sim         float64
	maxChildren int
	maxTokens   int
	roots       map[string]*drainNode // by error type, then length
	clusters    map[int]*cluster
	nextID      int
}

func newDrain(cfg GroupConfig) *drain {
	return &drain{depth: cfg.DrainDepth, sim: cfg.DrainSimilarity, maxChildren: cfg.DrainMaxChildren,
		maxTokens: cfg.DrainMaxTokens, roots: map[string]*drainNode{}, clusters: map[int]*cluster{}, nextID: 1}
}

func (d *drain) tokenize(msg string) []string {
	toks := strings.Fields(msg)
	if len(toks) > d.maxTokens {
		toks = toks[:d.maxTokens]
	}
	if len(toks) == 0 {
		toks = []string{"<empty>"}
	}
	return toks
}

// routeKey is the child a token leads to: tokens with digits or masks go to
// the wildcard child, since they vary.
func routeKey(t string) string {
	if t == Wildcard || strings.ContainsAny(t, "0123456789<") {
		return Wildcard
	}
	return t
}

func lengthKey(n int) string {
	var b [8]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return "#" + string(b[i:])
}

// leaf walks (and with create, builds) the path of a message.
func (d *drain) leaf(typ string, toks []string, create bool) *drainNode {
	root := d.roots[typ]
	if root == nil {
		if !create {
			return nil
		}
		root = &drainNode{children: map[string]*drainNode{}}
		d.roots[typ] = root
	}
	node := root.children[lengthKey(len(toks))]
	if node == nil {
		if !create {
			return nil
		}
		node = &drainNode{children: map[string]*drainNode{}}
		root.children[lengthKey(len(toks))] = node
	}
	for i := 0; i < d.depth && i < len(toks); i++ {
		key := routeKey(toks[i])
		next := node.children[key]
		if next == nil && key != Wildcard {
			if create && len(node.children) < d.maxChildren {
				next = &drainNode{children: map[string]*drainNode{}}
				node.children[key] = next
			} else {
				next = node.children[Wildcard]
				key = Wildcard
			}
		}
		if next == nil {
			if !create {
				return nil
			}
			next = &drainNode{children: map[string]*drainNode{}}
			node.children[key] = next
		}
		node = next
	}
	return node
}

// similarity is the share of positions where the template and the message
// agree (a wildcard agrees with any token that is not a key); a key token
// that differs makes them unrelated (0).
func similarity(tpl, toks []string) float64 {
	if len(tpl) != len(toks) || len(toks) == 0 {
		return 0
	}
	eq := 0
	for i, t := range tpl {
		switch {
		case t == toks[i]:
			eq++
		case isKeyToken(toks[i]) || isKeyToken(t):
			return 0
		case t == Wildcard:
			eq++
		}
	}
	return float64(eq) / float64(len(toks))
}

// search finds the cluster a message would join, without learning.
func (d *drain) search(typ string, toks []string) *cluster {
	node := d.leaf(typ, toks, false)
	if node == nil {
		return nil
	}
	var best *cluster
	bestSim := -1.0
	for _, id := range node.clusters {
		c := d.clusters[id]
		s := similarity(c.Tokens, toks)
		if s > bestSim || s == bestSim && best != nil && c.ID < best.ID {
			best, bestSim = c, s
		}
	}
	if best == nil || bestSim < d.sim {
		return nil
	}
	return best
}

// add learns a message: it joins the best cluster (generalising its
// template) or starts a new one. changed reports a template that changed.
func (d *drain) add(typ string, toks []string) (c *cluster, changed bool) {
	if c = d.search(typ, toks); c != nil {
		c.Size++
		for i, t := range c.Tokens {
			if t != toks[i] && t != Wildcard {
				c.Tokens[i] = Wildcard
				changed = true
			}
		}
		return c, changed
	}
	c = &cluster{ID: d.nextID, Type: typ, Tokens: append([]string(nil), toks...), Size: 1}
	d.nextID++
	d.clusters[c.ID] = c
	node := d.leaf(typ, toks, true)
	node.clusters = append(node.clusters, c.ID)
	return c, true
}

// insert puts a restored cluster back into the tree.
func (d *drain) insert(c *cluster) {
	d.clusters[c.ID] = c
	node := d.leaf(c.Type, c.Tokens, true)
	node.clusters = append(node.clusters, c.ID)
	if c.ID >= d.nextID {
		d.nextID = c.ID + 1
	}
}

// remove drops a cluster (when its last group is evicted).
func (d *drain) remove(id int) {
	c := d.clusters[id]
	if c == nil {
		return
	}
	delete(d.clusters, id)
	if node := d.leaf(c.Type, c.Tokens, false); node != nil {
		for i, x := range node.clusters {
			if x == id {
				node.clusters = append(node.clusters[:i], node.clusters[i+1:]...)
				break
			}
		}
	}
}

func (d *drain) sortedClusters() []*cluster {
	out := make([]*cluster, 0, len(d.clusters))
	for _, c := range d.clusters {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
