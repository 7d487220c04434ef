package sqlstore

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/kaizenhq/kaizen/learning"
)

// A pattern's content key (learning.ContentKey: lower case, spaces
// folded) and its hash are computed once per content in a transaction.
// A group of outcomes names the same few pattern contents many times
// (the prefetch, the lookup by content, every update of the pattern), and
// each computation lowered, split and joined the content and hashed it:
// about 8 % of the CPU of a process recording outcomes on PostgreSQL.
// The hash is the SHA-256 of the content key: content keys can exceed
// index entry limits, their hashes cannot.

type contentKeys struct{ key, hash string }

// keysOf returns the content key and content hash of content.
func (t *Tx) keysOf(content string) contentKeys {
	if k, ok := t.keys[content]; ok {
		return k
	}
	key := learning.ContentKey(content)
	sum := sha256.Sum256([]byte(key))
	k := contentKeys{key: key, hash: hex.EncodeToString(sum[:])}
	if t.keys == nil {
		t.keys = map[string]contentKeys{}
	}
	t.keys[content] = k
	return k
}
