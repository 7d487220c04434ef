// Package kaizen is the engine that makes teams of AI coding agents learn from
// their own results: agents report outcomes, errors and pattern usage, kaizen
// scores them, learns which decomposition strategies work and which fail, and
// hands back guidance before the next plan.
//
// Open an engine with [Open]; every user action is one [Engine] method, and the
// CLI, REST API and MCP server are thin adapters over those methods.
package kaizen
