// Package tokenize is kaizen's one text tokenizer, shared by full-text
// search (package experience, every storage backend) and the offline
// embedder (package model): the same folding of full-width forms, the same
// notion of a CJK letter, Latin words split at camelCase, CJK runs as
// character bigrams. [Tokenize] gives the terms the full-text index stores;
// [Words] gives the stemmed words and CJK runs the offline embedder hashes.
package tokenize
