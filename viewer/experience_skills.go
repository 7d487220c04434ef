package viewer

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Skills: the list (status, search), a page per skill with its SKILL.md
// (read by the viewer's minimal Markdown reader, every text escaped), its
// versions and adopted heuristics, the status forms (SetSkillStatus) and a
// bundle download (ExportSkills).

// ---- the list ----

type skillsData struct {
	base
	Q, Status string
	Statuses  []string
	Items     []experience.Skill
	listView
}

func (v *Viewer) skillList(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	status, err := q.oneOf("status", anyOf(experience.SkillStatuses)...)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := skillsData{base: v.base(r, "Skills", "skills"), Q: search, Status: status, Statuses: names(experience.SkillStatuses)}
	list, err := v.e.ListSkills(ctx, kaizen.SkillQuery{Project: d.Project, Status: status, Search: search, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/skills", []any{"project", d.Project, "q", search, "status", status}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "experience_skills", d)
}

// ---- a skill ----

// skillView is a skill's panel.
type skillView struct {
	Project string
	D       *kaizen.SkillDetail
	S       experience.Skill
	Doc     []mdBlock
	Flash   *flash
	Self    string
	Path    string
	// Moves are the other states, offered as buttons; the engine decides
	// which moves it allows (a refused one shows its message).
	Moves []string
	// Bundle is the download link of the skill's bundle.
	Bundle string
}

func (v *Viewer) skillPanel(ctx context.Context, project, ref string) (*skillView, error) {
	d, err := v.e.GetSkill(ctx, project, ref)
	if err != nil {
		return nil, err
	}
	s := d.Skill
	p := &skillView{Project: project, D: d, S: s, Doc: renderMarkdown(s.Content), Path: skillPath(s.ID),
		Moves:  slices.DeleteFunc(names(experience.SkillStatuses), func(x string) bool { return x == string(s.Status) }),
		Bundle: link("/skills/bundle", "project", project, "skill", s.ID)}
	p.Self = link(p.Path, "project", project)
	return p, nil
}

func (v *Viewer) skillPage(w http.ResponseWriter, r *http.Request) error {
	return serveDetail(v, w, r, v.skillPanel, v.renderSkill)
}

func (v *Viewer) renderSkill(w http.ResponseWriter, r *http.Request, status int, p *skillView) {
	v.renderDetail(w, r, status, "experience_skill", "skill-panel", "Skill "+p.S.Name, "skills", "/skills", p)
}

// skillStatus moves a skill to another state.
func (v *Viewer) skillStatus(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	project, ref := v.project(r), r.PathValue("id")
	to := strings.TrimSpace(r.PostForm.Get("status"))
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	res, actErr := v.e.SetSkillStatus(ctx, kaizen.SkillStatusInput{Project: project, Skill: ref, Status: to})
	page := skillPath(ref)
	if actErr == nil {
		page = skillPath(res.Skill.ID) // the page of a skill named by its name
	}
	return answerAction(v, w, r, ctx, project, page, actErr,
		func() *flash { return &flash{Kind: "ok", Message: "Skill " + string(res.Skill.Status) + "."} },
		func() (*skillView, error) { return v.skillPanel(ctx, project, ref) },
		func(status int, p *skillView) { v.renderSkill(w, r, status, p) })
}

// maxBundleSkills bounds the skills named in one download.
const maxBundleSkills = 100

// skillBundle downloads a skill bundle (kaizen-skill-bundle JSON): the
// skills named by ?skill= (repeatable, names or ids), else every skill of
// the project.
func (v *Viewer) skillBundle(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOf(r)
	if err != nil {
		return err
	}
	var refs []string
	for _, s := range q.v["skill"] {
		if s = strings.TrimSpace(s); s != "" {
			refs = append(refs, s)
		}
	}
	if len(refs) > maxBundleSkills {
		return badRequest("query parameter skill: at most %d skills per bundle", maxBundleSkills)
	}
	project := v.project(r)
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	var buf bytes.Buffer
	res, err := v.e.ExportSkills(ctx, &buf, kaizen.SkillExportInput{Project: project, Names: refs})
	if err != nil {
		return err
	}
	name := "skills.json"
	if len(res.Skills) == 1 && len(refs) == 1 {
		name = res.Skills[0] + ".json"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(safeFileName(name)))
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
	return nil
}

// safeFileName keeps letters, digits, dot, dash and underscore of a
// download's file name (skill names are sanitised already; this makes the
// header safe whatever they hold).
func safeFileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
