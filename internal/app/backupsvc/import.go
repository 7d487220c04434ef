package backupsvc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/learningsvc"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// importState carries the id mapping of one import.
// importState carries the id mapping of one import.
type importState struct {
	s       *Service
	tx      store.Tx
	target  string
	res     *ImportResult
	touched map[string]bool
	// ids maps project → imported pattern id → local pattern id.
	ids map[string]map[string]string
	// gens maps project → imported pattern id → (imported gen, local gen).
	gens map[string]map[string][2]int64
	// skills maps project → the ids of the skills inserted (their
	// SKILL.md files are written after the commit); indexed lists the
	// projects whose experience items need vectors.
	skills  map[string][]string
	indexed map[string]bool
	now     time.Time
	// teamNew holds the teams and runs this import created (team.go).
	teamNew map[string]bool
}

// Import reads a JSONL export and inserts its records in one transaction,
// then rebuilds the aggregates of the projects it touched. Importing the
// same file again changes nothing. A pattern whose content already exists
// under another id is merged into the existing pattern: its evidence is
// added there. Any invalid line aborts the whole import.
func (s *Service) Import(ctx context.Context, r io.Reader, opts ImportOptions) (*ImportResult, error) {
	const op = "import"
	if opts.Project != "" {
		if err := app.ValidProject(opts.Project); err != nil {
			return nil, app.Invalid(op, "project", "%v", err)
		}
	}
	lines, err := readLines(op, r)
	if err != nil {
		return nil, err
	}
	var head exportLine
	var hdr exportHeader
	if err := json.Unmarshal(lines[0], &head); err != nil || head.Type != recHeader ||
		json.Unmarshal(head.Record, &hdr) != nil || hdr.Format != ExportFormat {
		return nil, app.Invalid(op, "line 1", "not a %s header", ExportFormat)
	}
	if hdr.Version < 1 || hdr.Version > exportVersion {
		return nil, app.Invalid(op, "line 1", "unsupported export version %d (this kaizen reads 1 to %d)", hdr.Version, exportVersion)
	}
	var res *ImportResult
	after := func() error { return nil }
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		res = &ImportResult{Records: map[string]ImportCount{}, Projects: []string{}}
		st := &importState{s: s, tx: tx, target: opts.Project, res: res, touched: map[string]bool{},
			ids: map[string]map[string]string{}, gens: map[string]map[string][2]int64{},
			skills: map[string][]string{}, indexed: map[string]bool{}, now: s.env.Now()}
		for i, line := range lines[1:] {
			if opts.Progress != nil && (i+1)%progressEvery == 0 {
				opts.Progress(i+1, len(lines)-1)
			}
			if err := st.line(ctx, line); err != nil {
				var ke *app.Error
				if errors.As(err, &ke) && ke.Kind == app.KindInvalid {
					ke.Field = fmt.Sprintf("line %d", i+2) + prefixField(ke.Field)
					return ke
				}
				return fmt.Errorf("line %d: %w", i+2, err)
			}
		}
		for p := range st.touched {
			res.Projects = append(res.Projects, p)
			if err := s.learning.RebuildTx(ctx, tx, p, s.env.Now()); err != nil {
				return err
			}
		}
		slices.Sort(res.Projects)
		after = func() error {
			for _, p := range res.Projects {
				if st.indexed[p] || len(st.skills[p]) > 0 {
					if err := s.experience.AfterImport(ctx, p, st.skills[p]); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := after(); err != nil {
		return nil, app.Wrap(op, err)
	}
	if opts.Progress != nil {
		opts.Progress(len(lines)-1, len(lines)-1)
	}
	return res, nil
}

// maxLineBytes bounds one line of an import.
const maxLineBytes = 4 * app.MaxInputBytes

// readLines reads the non-blank lines of an import, each valid UTF-8 (a
// line with invalid bytes is refused, never repaired).
func readLines(op string, r io.Reader) ([][]byte, error) {
	var lines [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if !utf8.Valid(sc.Bytes()) {
			return nil, app.Invalid(op, fmt.Sprintf("line %d", n), "is not valid UTF-8")
		}
		lines = append(lines, slices.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, &app.Error{Op: op, Kind: app.KindInvalid, Message: "read: " + err.Error(), Err: err}
	}
	if len(lines) == 0 {
		return nil, app.Invalid(op, "", "empty input: expected a %s header line", ExportFormat)
	}
	return lines, nil
}

func prefixField(f string) string {
	if f == "" {
		return ""
	}
	return " " + f
}

func (st *importState) count(typ string, inserted bool) {
	c := st.res.Records[typ]
	if inserted {
		c.Inserted++
	} else {
		c.Skipped++
	}
	st.res.Records[typ] = c
}

// project applies the target override and validates.
func (st *importState) project(p string) (string, error) {
	if st.target != "" {
		p = st.target
	}
	if err := app.ValidProject(p); err != nil {
		return "", app.Invalid("import", "project", "%v", err)
	}
	st.touched[p] = true
	return p, nil
}

// patternID maps an imported pattern id to the local one.
func (st *importState) patternID(project, id string) (string, error) {
	if local, ok := st.ids[project][id]; ok {
		return local, nil
	}
	return "", app.Invalid("import", "pattern_id", "references pattern %q, which is not earlier in the file", id)
}

// generation maps an imported event generation to the local pattern's for
// a pattern merged under another id; ok is false for evidence of an older
// generation of a merged pattern. Events of patterns kept under their own
// id keep their generation.
func (st *importState) generation(project, id string, gen int64) (int64, bool) {
	g, ok := st.gens[project][id]
	if !ok || g[0] == g[1] {
		return gen, true
	}
	return g[1], gen == g[0]
}

// decodeRecord decodes one record strictly (unknown fields refused) and
// checks what every record must respect: no time after now (evidence from
// the future would never decay), no text field beyond the import limits.
func decodeRecord[T any](st *importState, raw json.RawMessage) (T, error) {
	var v T
	if err := app.DecodeJSON(raw, &v, "import"); err != nil {
		return v, err
	}
	scrubRecord(&v)
	return v, app.CheckRecord("import", v, st.now)
}

func (st *importState) line(ctx context.Context, line []byte) error {
	var l exportLine
	if err := app.DecodeJSON(line, &l, "import"); err != nil {
		return err
	}
	tx := st.tx
	switch l.Type {
	case recPattern:
		p, err := decodeRecord[learning.Pattern](st, l.Record)
		if err != nil {
			return err
		}
		return st.pattern(ctx, p)
	case recMaturity:
		m, err := decodeRecord[learning.Maturity](st, l.Record)
		if err != nil {
			return err
		}
		if m.Project, err = st.project(m.Project); err != nil {
			return err
		}
		local, err := st.patternID(m.Project, m.PatternID)
		if err != nil {
			return err
		}
		if local != m.PatternID { // merged: the local pattern keeps its own state
			st.count(recMaturity, false)
			return nil
		}
		if m.Manual != "" && m.Manual != learning.Proven && m.Manual != learning.Deprecated {
			return app.Invalid("import", "manual_state", "invalid %q", m.Manual)
		}
		_, err = tx.GetMaturity(ctx, m.Project, m.PatternID)
		if err == nil {
			st.count(recMaturity, false)
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		st.count(recMaturity, true)
		return tx.PutMaturity(ctx, m)
	case recMaturityFeedback:
		f, err := decodeRecord[learning.MaturityFeedback](st, l.Record)
		if err != nil {
			return err
		}
		if f.Project, err = st.project(f.Project); err != nil {
			return err
		}
		if err := app.ValidID("import", "id", f.ID); err != nil {
			return err
		}
		if !f.Type.Valid() || app.CheckFloat("import", "weight", f.Weight) != nil || f.Weight < 0 {
			return app.Invalid("import", "maturity_feedback", "invalid type %q or weight %v", f.Type, f.Weight)
		}
		orig := f.PatternID
		if f.PatternID, err = st.patternID(f.Project, orig); err != nil {
			return err
		}
		var ok bool
		if f.Generation, ok = st.generation(f.Project, orig, f.Generation); !ok {
			f.Generation = -1
		}
		ins, err := tx.InsertMaturityFeedback(ctx, f)
		st.count(recMaturityFeedback, ins)
		return err
	case recOutcome:
		o, err := decodeRecord[learning.Outcome](st, l.Record)
		if err != nil {
			return err
		}
		if o.Project, err = st.project(o.Project); err != nil {
			return err
		}
		if err := app.ValidID("import", "id", o.ID); err != nil {
			return err
		}
		if !o.Score.Type.Valid() || app.CheckFloat("import", "raw_score", o.Score.Raw) != nil || o.Score.Raw < 0 || o.Score.Raw > 1 {
			return app.Invalid("import", "score", "invalid type %q or raw_score %v", o.Score.Type, o.Score.Raw)
		}
		for _, c := range o.Criteria {
			if err := learning.ValidateName("criteria", c); err != nil {
				return app.Invalid("import", "criteria", "%v", err)
			}
		}
		for i, id := range o.Patterns {
			if o.Patterns[i], err = st.patternID(o.Project, id); err != nil {
				return err
			}
		}
		ins, err := tx.InsertOutcome(ctx, o)
		st.count(recOutcome, ins)
		return err
	case recError:
		x, err := decodeRecord[learning.ErrorEntry](st, l.Record)
		if err != nil {
			return err
		}
		if x.Project, err = st.project(x.Project); err != nil {
			return err
		}
		if err := app.ValidID("import", "id", x.ID); err != nil {
			return err
		}
		if !x.Type.Valid() {
			return app.Invalid("import", "error_type", "unknown type %q", x.Type)
		}
		ins, err := tx.InsertError(ctx, x)
		st.count(recError, ins)
		return err
	default:
		if importers[l.Type] == nil {
			return app.Invalid("import", "type", "unknown record type %q", l.Type)
		}
		return importers[l.Type](ctx, st, l.Record)
	}
}

// pattern imports a pattern, merging it into an existing pattern with the
// same content key when one exists under another id.
func (st *importState) pattern(ctx context.Context, p learning.Pattern) error {
	var err error
	if p.Project, err = st.project(p.Project); err != nil {
		return err
	}
	if err := app.ValidID("import", "id", p.ID); err != nil {
		return err
	}
	if err := learningsvc.PatternContent("import", "content", p.Content); err != nil && p.Kind == learning.KindPattern {
		return err
	}
	if p.Kind != learning.KindPattern && p.Kind != learning.KindAntiPattern {
		return app.Invalid("import", "kind", "invalid %q", p.Kind)
	}
	if p.SuccessCount < 0 || p.FailureCount < 0 {
		return app.Invalid("import", "success_count", "counts must be >= 0")
	}
	if st.ids[p.Project] == nil {
		st.ids[p.Project], st.gens[p.Project] = map[string]string{}, map[string][2]int64{}
	}
	importedID := p.ID
	if p.Kind == learning.KindAntiPattern {
		src, ok := st.ids[p.Project][p.SourceID]
		if !ok {
			src = p.SourceID // source not in the file: keep the reference as is
		}
		p.SourceID, p.ID = src, learning.AntiPatternID(src)
	}
	p.AntiPatternID = "" // relinked by the rebuild
	ins, err := st.tx.InsertPattern(ctx, p)
	if err != nil {
		return err
	}
	local := p
	if !ins {
		if local, err = st.tx.GetPattern(ctx, p.Project, p.ID); errors.Is(err, store.ErrNotFound) && p.Kind == learning.KindPattern {
			var ok bool
			if local, ok, err = learningsvc.FindPattern(ctx, st.tx, p.Project, p.Content); err == nil && !ok {
				err = fmt.Errorf("pattern %s conflicts with an existing pattern", p.ID)
			}
			st.res.Remapped++
		}
		if err != nil {
			return err
		}
	}
	st.count(recPattern, ins)
	st.ids[p.Project][importedID] = local.ID
	if local.ID != importedID && p.Kind == learning.KindPattern {
		st.gens[p.Project][importedID] = [2]int64{p.Generation, local.Generation}
	}
	return nil
}
