package server

import (
	"bytes"
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// The experience system (seed 001) over REST: captured turns, feedback
// signals, task experiences and the agent-as-extractor flow, heuristics,
// recall and skills. Each route adapts one engine method (see docs/api.md).

func captureProject(in *kaizen.CaptureInput) *string                     { return &in.Project }
func signalsProject(in *kaizen.SignalsInput) *string                     { return &in.Project }
func experienceProject(in *kaizen.ExperienceInput) *string               { return &in.Project }
func extractionRequestProject(in *kaizen.ExtractionRequestInput) *string { return &in.Project }
func extractionSubmitProject(in *kaizen.ExtractionSubmitInput) *string   { return &in.Project }
func recallProject(in *kaizen.RecallInput) *string                       { return &in.Project }
func skillGenerateProject(in *kaizen.SkillGenerateInput) *string         { return &in.Project }
func heuristicFeedbackProject(in *kaizen.HeuristicFeedbackInput) *string { return &in.Project }
func heuristicActionProject(in *kaizen.HeuristicActionInput) *string     { return &in.Project }
func skillStatusProject(in *kaizen.SkillStatusInput) *string             { return &in.Project }
func heuristicFeedbackID(in *kaizen.HeuristicFeedbackInput) (*string, string) {
	return &in.HeuristicID, "heuristic_id"
}
func heuristicActionID(in *kaizen.HeuristicActionInput) (*string, string) {
	return &in.HeuristicID, "heuristic_id"
}
func skillStatusRef(in *kaizen.SkillStatusInput) (*string, string) { return &in.Skill, "skill" }

func (s *Server) experienceRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("POST /api/v1/turns", bodyAction(s, "capture", http.StatusOK, captureProject, e.Capture)),
		api("GET /api/v1/turns", listAction(s, "list turns", e.ListTurns, func(q query, limit, offset int) (kaizen.TurnQuery, error) {
			return kaizen.TurnQuery{Project: q.str("project"), TaskID: q.str("bead_id"), Limit: limit, Offset: offset}, nil
		}, "project", "bead_id", "limit", "offset")),

		api("POST /api/v1/signals/extract", bodyAction(s, "extract signals", http.StatusOK, signalsProject, e.ExtractSignals)),
		api("GET /api/v1/signals", listAction(s, "list signals", e.ListSignals, func(q query, limit, offset int) (kaizen.SignalQuery, error) {
			return kaizen.SignalQuery{Project: q.str("project"), TaskID: q.str("bead_id"), Type: q.str("type"), Limit: limit, Offset: offset}, nil
		}, "project", "bead_id", "type", "limit", "offset")),

		api("POST /api/v1/experiences/extract", bodyAction(s, "extract experience", http.StatusOK, experienceProject, e.ExtractExperience)),
		api("GET /api/v1/experiences", listAction(s, "list experiences", e.ListExperiences, func(q query, limit, offset int) (kaizen.ExperienceQuery, error) {
			return kaizen.ExperienceQuery{Project: q.str("project"), Limit: limit, Offset: offset}, nil
		}, "project", "limit", "offset")),
		api("GET /api/v1/experiences/{bead_id}", pathAction(s, "get experience", "bead_id", e.GetExperience)),
		api("POST /api/v1/extraction/request", bodyAction(s, "extraction request", http.StatusOK, extractionRequestProject, e.ExtractionRequest)),
		api("POST /api/v1/extraction/submit", bodyAction(s, "extraction submit", http.StatusOK, extractionSubmitProject, e.SubmitExtraction)),

		api("GET /api/v1/heuristics", listAction(s, "list heuristics", e.ListHeuristics, func(q query, limit, offset int) (kaizen.HeuristicQuery, error) {
			return kaizen.HeuristicQuery{Project: q.str("project"), Status: commaList(q.list("status")), Kind: q.str("kind"),
				Search: q.str("search"), Limit: limit, Offset: offset}, nil
		}, "project", "status...", "kind", "search", "limit", "offset")),
		api("GET /api/v1/heuristics/{id}", pathAction(s, "get heuristic", "id", e.GetHeuristic)),
		api("POST /api/v1/heuristics/{id}/feedback", pathBodyAction(s, "heuristic feedback", "id",
			heuristicFeedbackProject, heuristicFeedbackID, e.HeuristicFeedback)),
		api("POST /api/v1/heuristics/{id}/action", pathBodyAction(s, "heuristic action", "id",
			heuristicActionProject, heuristicActionID, e.HeuristicAction)),

		api("POST /api/v1/recall", bodyAction(s, "recall", http.StatusOK, recallProject, e.Recall)),
		api("GET /api/v1/recalls", listAction(s, "list recalls", e.ListRecalls, func(q query, limit, offset int) (kaizen.RecallQuery, error) {
			return kaizen.RecallQuery{Project: q.str("project"), TaskID: q.str("bead_id"), RefID: q.str("ref_id"), Limit: limit, Offset: offset}, nil
		}, "project", "bead_id", "ref_id", "limit", "offset")),

		api("GET /api/v1/skills", listAction(s, "list skills", e.ListSkills, func(q query, limit, offset int) (kaizen.SkillQuery, error) {
			return kaizen.SkillQuery{Project: q.str("project"), Status: q.str("status"), Search: q.str("search"), Limit: limit, Offset: offset}, nil
		}, "project", "status", "search", "limit", "offset")),
		api("GET /api/v1/skills/export", s.exportSkills),
		{Pattern: "POST /api/v1/skills/import", Handler: s.api(s.importSkills), MaxBodyBytes: s.opts.MaxImportBytes},
		api("POST /api/v1/skills/generate", bodyAction(s, "generate skill", http.StatusOK, skillGenerateProject, e.GenerateSkill)),
		api("GET /api/v1/skills/{ref}", pathAction(s, "get skill", "ref", e.GetSkill)),
		api("POST /api/v1/skills/{ref}/status", pathBodyAction(s, "set skill status", "ref",
			skillStatusProject, skillStatusRef, e.SetSkillStatus)),

		api("POST /api/v1/reembed", projectAction(s, "reembed", e.Reembed)),
	}
}

// exportSkills answers the skill bundle itself (kaizen-skill-bundle v1).
// The bundle is built in memory first, so an error is still answered as
// JSON.
func (s *Server) exportSkills(w http.ResponseWriter, r *http.Request) error {
	const op = "export skills"
	q, err := parseQuery(r, op, "project", "names...")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := s.engine.ExportSkills(r.Context(), &buf, kaizen.SkillExportInput{Project: q.str("project"),
		Names: commaList(q.list("names"))}); err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="kaizen-skills.json"`)
	writeText(w, "application/json; charset=utf-8", http.StatusOK, buf.String())
	return nil
}

// importSkills imports the bundle in the body (bounded by MaxImportBytes)
// into ?project=.
func (s *Server) importSkills(w http.ResponseWriter, r *http.Request) error {
	const op = "import skills"
	q, err := parseQuery(r, op, "project")
	if err != nil {
		return err
	}
	if err := checkContentType(r, op, jsonTypes); err != nil {
		return err
	}
	res, err := s.engine.ImportSkills(r.Context(), r.Body, kaizen.SkillImportInput{Project: q.str("project")})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}
