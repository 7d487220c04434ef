package learning

import (
	"slices"
	"sync"
)

// extractMemo remembers ExtractPatterns' results for recent descriptions:
// plan guidance extracts the strategies of the same task description twice
// per request (the mentioned strategies and the guidance index's walk),
// and hooks ask about the same prompt again, while one extraction runs 24
// regular expressions over the text. The function is pure, so a
// remembered result is the result; callers get their own copy.
var extractMemo = &extractCache{max: 256, m: map[string][]Extracted{}}

type extractCache struct {
	mu  sync.Mutex
	max int
	m   map[string][]Extracted
}

// extractMemoMaxLen bounds the descriptions remembered (longer ones are
// extracted every time, so the memo holds at most max × 4 KiB of text).
const extractMemoMaxLen = 4096

func (c *extractCache) get(description string) []Extracted {
	if len(description) > extractMemoMaxLen {
		return extractPatterns(description)
	}
	c.mu.Lock()
	out, ok := c.m[description]
	c.mu.Unlock()
	if ok {
		return slices.Clone(out)
	}
	out = extractPatterns(description)
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[description] = slices.Clone(out)
	c.mu.Unlock()
	return out
}
