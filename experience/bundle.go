package experience

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Skill bundles: a project's skills exported with their versions and the
// heuristics they adopt, as one JSON document.
const (
	BundleFormat  = "kaizen-skill-bundle"
	BundleVersion = 1
	// DefaultBundleMaxBytes is the size cap of [ReadBundle] when maxBytes
	// is not positive.
	DefaultBundleMaxBytes = 32 << 20
	// MaxBundleSkills caps the skills of a bundle.
	MaxBundleSkills = 10_000
)

// Bundle is an exported set of skills.
type Bundle struct {
	Format     string         `json:"format"`
	Version    int            `json:"version"`
	ExportedAt time.Time      `json:"exported_at"`
	Project    string         `json:"project"`
	Skills     []BundledSkill `json:"skills"`
}

// BundledSkill is a skill with all its versions (oldest first, the last
// being the current one) and the heuristics it adopts.
type BundledSkill struct {
	Skill      Skill          `json:"skill"`
	Versions   []SkillVersion `json:"versions"`
	Heuristics []Heuristic    `json:"heuristics"`
}

// BundleError is an invalid bundle. Field is a JSON path into the bundle
// ("skills[1].versions[0].version"), empty for the whole document.
type BundleError struct {
	Field   string
	Message string
}

func (e *BundleError) Error() string {
	if e.Field == "" {
		return "experience: bundle: " + e.Message
	}
	return "experience: bundle: " + e.Field + ": " + e.Message
}

func bundleErr(field, format string, a ...any) error {
	return &BundleError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// WriteBundle writes b as indented JSON. Format and Version default to
// [BundleFormat] and [BundleVersion]; secrets in every text (skill
// descriptions, steps and documents, version documents and changelogs,
// heuristics) are replaced by [RedactSecrets]. The bundle is checked with
// the rules of [ReadBundle] first, so what WriteBundle writes ReadBundle
// reads.
func WriteBundle(w io.Writer, b Bundle) error {
	if b.Format == "" {
		b.Format = BundleFormat
	}
	if b.Version == 0 {
		b.Version = BundleVersion
	}
	skills := make([]BundledSkill, len(b.Skills))
	for i, s := range b.Skills {
		skills[i] = bundleRedact(s)
	}
	b.Skills = skills
	if err := bundleCheck(b); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return fmt.Errorf("experience: bundle: encode: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("experience: bundle: write: %w", err)
	}
	return nil
}

// bundleRedact returns a copy of s with secrets redacted (the input's
// slices are not modified).
func bundleRedact(s BundledSkill) BundledSkill {
	red := func(t string) string { out, _ := RedactSecrets(t); return out }
	s.Skill.Description = red(s.Skill.Description)
	s.Skill.WhenToUse = red(s.Skill.WhenToUse)
	s.Skill.Content = red(s.Skill.Content)
	s.Skill.Steps = slices.Clone(s.Skill.Steps)
	for i := range s.Skill.Steps {
		s.Skill.Steps[i] = red(s.Skill.Steps[i])
	}
	s.Versions = slices.Clone(s.Versions)
	for i := range s.Versions {
		s.Versions[i].Content = red(s.Versions[i].Content)
		s.Versions[i].Changelog = red(s.Versions[i].Changelog)
	}
	s.Heuristics = slices.Clone(s.Heuristics)
	for i := range s.Heuristics {
		h := &s.Heuristics[i]
		h.Trigger, h.Rule, h.Why, h.StatusReason = red(h.Trigger), red(h.Rule), red(h.Why), red(h.StatusReason)
	}
	return s
}

// ReadBundle reads and checks a bundle of at most maxBytes bytes
// ([DefaultBundleMaxBytes] when not positive). It is strict: unknown
// fields, trailing data, invalid UTF-8 or NUL characters, a format other
// than [BundleFormat] or a version other than [BundleVersion] are errors;
// every skill must have an id, a sanitised name (unique in the bundle), a
// valid status, versions numbered 1..n with the skill at version n and
// its content equal to the last version's; heuristics need an id, a
// valid kind and status, a trigger and a rule; every heuristic id a skill
// adopts must be in the bundle. Errors are [*BundleError].
func ReadBundle(r io.Reader, maxBytes int64) (Bundle, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultBundleMaxBytes
	}
	data, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return Bundle{}, fmt.Errorf("experience: bundle: read: %w", err)
	}
	if int64(len(data)) > maxBytes {
		return Bundle{}, bundleErr("", "larger than the limit of %d bytes", maxBytes)
	}
	if !utf8.Valid(data) {
		return Bundle{}, bundleErr("", "not valid UTF-8")
	}
	// Check the envelope first, so that a bundle of another format or
	// version is named as such rather than as unknown fields.
	var head struct {
		Format  *string `json:"format"`
		Version *int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Bundle{}, bundleErr("", "not a JSON object: %v", bundleJSONMessage(err))
	}
	if head.Format == nil {
		return Bundle{}, bundleErr("format", "missing (want %q)", BundleFormat)
	}
	if *head.Format != BundleFormat {
		return Bundle{}, bundleErr("format", "%q is not %q", extractCap(*head.Format, 80), BundleFormat)
	}
	if head.Version == nil {
		return Bundle{}, bundleErr("version", "missing (want %d)", BundleVersion)
	}
	if *head.Version != BundleVersion {
		return Bundle{}, bundleErr("version", "%s version %d is not supported (this build reads version %d)", BundleFormat, *head.Version, BundleVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return Bundle{}, bundleErr("", "%s", bundleJSONMessage(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Bundle{}, bundleErr("", "unexpected data after the bundle")
	}
	if err := bundleCheck(b); err != nil {
		return Bundle{}, err
	}
	return b, nil
}

func bundleJSONMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %s: %s is not a valid %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// bundleCheck applies the rules of ReadBundle.
func bundleCheck(b Bundle) error {
	if b.Format != BundleFormat {
		return bundleErr("format", "%q is not %q", extractCap(b.Format, 80), BundleFormat)
	}
	if b.Version != BundleVersion {
		return bundleErr("version", "%s version %d is not supported (this build reads version %d)", BundleFormat, b.Version, BundleVersion)
	}
	if err := bundleText("project", b.Project); err != nil {
		return err
	}
	if len(b.Skills) > MaxBundleSkills {
		return bundleErr("skills", "%d skills, limit %d", len(b.Skills), MaxBundleSkills)
	}
	names := map[string]int{}
	skillIDs := map[string]int{}
	heuristics := map[string]bool{}
	for i, bs := range b.Skills {
		for j, h := range bs.Heuristics {
			p := fmt.Sprintf("skills[%d].heuristics[%d]", i, j)
			if err := bundleHeuristic(p, h); err != nil {
				return err
			}
			heuristics[h.ID] = true
		}
	}
	for i, bs := range b.Skills {
		p := fmt.Sprintf("skills[%d]", i)
		s := bs.Skill
		if strings.TrimSpace(s.ID) == "" {
			return bundleErr(p+".skill.id", "is empty")
		}
		if k, dup := skillIDs[s.ID]; dup {
			return bundleErr(p+".skill.id", "%q is also the id of skills[%d]", extractCap(s.ID, 80), k)
		}
		skillIDs[s.ID] = i
		if !skillValidName(s.Name) {
			return bundleErr(p+".skill.name", "%q is not a sanitised skill name", extractCap(s.Name, 80))
		}
		if k, dup := names[s.Name]; dup {
			return bundleErr(p+".skill.name", "%q is also the name of skills[%d]", s.Name, k)
		}
		names[s.Name] = i
		if !slices.Contains(SkillStatuses, s.Status) {
			return bundleErr(p+".skill.status", "%q is not draft, active or archived", extractCap(string(s.Status), 40))
		}
		if strings.TrimSpace(s.Description) == "" {
			return bundleErr(p+".skill.description", "is empty")
		}
		texts := []struct{ k, v string }{{"id", s.ID}, {"project", s.Project}, {"description", s.Description},
			{"when_to_use", s.WhenToUse}, {"content", s.Content}, {"source_task_id", s.SourceTaskID}}
		for _, t := range texts {
			if err := bundleText(p+".skill."+t.k, t.v); err != nil {
				return err
			}
		}
		for j, st := range s.Steps {
			if err := bundleText(fmt.Sprintf("%s.skill.steps[%d]", p, j), st); err != nil {
				return err
			}
		}
		if len(bs.Versions) == 0 {
			return bundleErr(p+".versions", "a skill needs at least one version")
		}
		for j, v := range bs.Versions {
			vp := fmt.Sprintf("%s.versions[%d]", p, j)
			if v.Version != j+1 {
				return bundleErr(vp+".version", "is %d, want %d (versions are numbered 1..n, oldest first)", v.Version, j+1)
			}
			if v.SkillID != s.ID {
				return bundleErr(vp+".skill_id", "%q is not the skill's id %q", extractCap(v.SkillID, 80), extractCap(s.ID, 80))
			}
			if err := bundleText(vp+".content", v.Content); err != nil {
				return err
			}
			if err := bundleText(vp+".changelog", v.Changelog); err != nil {
				return err
			}
		}
		last := bs.Versions[len(bs.Versions)-1]
		if s.Version != last.Version {
			return bundleErr(p+".skill.version", "is %d but the last version is %d", s.Version, last.Version)
		}
		if s.Content != last.Content {
			return bundleErr(p+".skill.content", "differs from the content of the last version (%d)", last.Version)
		}
		for j, id := range s.HeuristicIDs {
			if !heuristics[id] {
				return bundleErr(fmt.Sprintf("%s.skill.heuristic_ids[%d]", p, j), "heuristic %q is not in the bundle", extractCap(id, 80))
			}
		}
	}
	return nil
}

func bundleHeuristic(p string, h Heuristic) error {
	if strings.TrimSpace(h.ID) == "" {
		return bundleErr(p+".id", "is empty")
	}
	if !slices.Contains(HeuristicKinds, h.Kind) {
		return bundleErr(p+".kind", "%q is not avoid, prefer, verify or clarify", extractCap(string(h.Kind), 40))
	}
	if !slices.Contains(HeuristicStatuses, h.Status) {
		return bundleErr(p+".status", "%q is not a heuristic status", extractCap(string(h.Status), 40))
	}
	if strings.TrimSpace(h.Trigger) == "" {
		return bundleErr(p+".trigger", "is empty")
	}
	if strings.TrimSpace(h.Rule) == "" {
		return bundleErr(p+".rule", "is empty")
	}
	texts := []struct{ k, v string }{{"id", h.ID}, {"trigger", h.Trigger}, {"rule", h.Rule}, {"why", h.Why},
		{"status_reason", h.StatusReason}}
	for _, t := range texts {
		if err := bundleText(p+"."+t.k, t.v); err != nil {
			return err
		}
	}
	counts := []struct {
		k string
		v int64
	}{{"support_task_count", h.SupportTasks}, {"evidence_count", h.EvidenceCount}, {"helpful_count", h.HelpfulCount},
		{"misleading_count", h.MisleadingCount}, {"misleading_streak", h.MisleadingStreak}, {"recall_count", h.RecallCount}}
	for _, c := range counts {
		if c.v < 0 {
			return bundleErr(p+"."+c.k, "is negative (%d)", c.v)
		}
	}
	return nil
}

func bundleText(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return bundleErr(field, "contains a NUL character")
	}
	return nil
}
