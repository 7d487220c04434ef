package kaizen

import (
	"context"
	"io"
)

// Engine actions of export and import: each delegates to its service.

// Export writes the selected projects as JSONL: a header line, then one
// record per line in a stable order with stable field names.
func (e *Engine) Export(ctx context.Context, w io.Writer, opts ExportOptions) (*ExportResult, error) {
	e.experience.SettleRecalls() // recall events written behind their answers
	return e.backup.Export(ctx, w, opts)
}

// Import reads a JSONL export and inserts its records in one transaction,
// then rebuilds the aggregates of the projects it touched. Importing the
// same file again changes nothing. A pattern whose content already exists
// under another id is merged into the existing pattern: its evidence is
// added there. Any invalid line aborts the whole import.
func (e *Engine) Import(ctx context.Context, r io.Reader, opts ImportOptions) (*ImportResult, error) {
	return e.backup.Import(ctx, r, opts)
}
