// Package learning holds the pure algorithms of kaizen's learning system
// (seed 000): implicit feedback scoring of task outcomes, confidence decay,
// criterion weights and deprecation, pattern maturity, anti-pattern inversion,
// pattern extraction from decomposition descriptions, the error accumulator's
// retry context, plan guidance and explanations.
//
// Nothing here performs I/O or reads a clock: every time-dependent function
// takes `now` as a parameter, so results are exact and reproducible. Storage
// and transactions live in the store packages; the kaizen.Engine wires them.
//
// Decisions where the seed is ambiguous or the peer implementation is wrong
// are documented in docs/learning.md and pinned by the tests of this package.
package learning
