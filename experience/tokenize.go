package experience

import "github.com/kaizenhq/kaizen/internal/tokenize"

// Full-text limits (see package internal/tokenize).
const (
	// MaxDocumentTokens is the number of tokens Tokenize returns at most.
	MaxDocumentTokens = tokenize.MaxDocumentTokens
	// MaxTokenRunes is the length at which a token is cut.
	MaxTokenRunes = tokenize.MaxTokenRunes
	// MaxQueryTokens is the number of distinct tokens QueryTokens returns.
	MaxQueryTokens = tokenize.MaxQueryTokens
)

// Tokenize splits text into the terms every storage backend indexes (see
// tokenize.Tokenize for the rules).
func Tokenize(text string) []string { return tokenize.Tokenize(text) }

// SearchText is the document text stored for full-text search: the tokens
// of text joined by single spaces (duplicates kept for term frequency).
func SearchText(text string) string { return tokenize.SearchText(text) }

// QueryTokens returns the distinct tokens of a query, in order of first
// appearance, at most MaxQueryTokens of them.
func QueryTokens(text string) []string { return tokenize.QueryTokens(text) }
