package viewer

import (
	"net/http"
	"net/url"

	"github.com/kaizenhq/kaizen/server"
)

// The experience system (seed 001) in the viewer: heuristics with their
// lifecycle, evidence and verdicts; skills with their versions and
// SKILL.md; task experiences; feedback signals and captured turns; recalls
// with their scores. Every page is a thin adapter over the engine's
// experience methods (kaizen.Engine.ListHeuristics, GetHeuristic,
// HeuristicFeedback, HeuristicAction, ListSkills, GetSkill, SetSkillStatus,
// ExportSkills, ListExperiences, GetExperience, ListSignals, ListTurns,
// ListRecalls). Task ids and skill names are text agents chose, so every
// link escapes them as path segments or query values.

// experienceRoutes are the experience pages and actions, mounted like every page
// (session cookie, login redirect, form size limit).
func (v *Viewer) experienceRoutes(page func(pattern string, h handlerFunc) server.Route) []server.Route {
	return []server.Route{
		page("GET /heuristics", v.heuristicList),
		page("GET /heuristics/{$}", v.noHeuristic),
		page("GET /heuristics/{id}", v.heuristicPage),
		page("POST /heuristics/{id}/feedback", v.heuristicFeedback),
		page("POST /heuristics/{id}/action", v.heuristicAction),
		page("GET /skills", v.skillList),
		page("GET /skills/bundle", v.skillBundle),
		page("GET /skills/{$}", v.noSkill),
		page("GET /skills/{id}", v.skillPage),
		page("POST /skills/{id}/status", v.skillStatus),
		page("GET /experiences", v.experienceList),
		page("GET /experiences/{$}", v.noExperience),
		page("GET /experiences/{task}", v.experiencePage),
		page("GET /signals", v.signalList),
		page("GET /turns", v.turnList),
		page("GET /recalls", v.recallList),
		page("GET /recalls/{$}", v.noRecall),
		page("GET /recalls/{id}", v.recallPage),
	}
}

// Paths of the experience pages, each id escaped as one path segment.
func heuristicPath(id string) string    { return "/heuristics/" + url.PathEscape(id) }
func skillPath(id string) string        { return "/skills/" + url.PathEscape(id) }
func experiencePath(task string) string { return "/experiences/" + url.PathEscape(task) }
func recallPath(id string) string       { return "/recalls/" + url.PathEscape(id) }

func init() {
	// The experience templates' helpers. They return plain strings and
	// values, never trusted markup: html/template escapes what they give
	// in its context.
	funcs["hpath"] = heuristicPath
	funcs["skpath"] = skillPath
	funcs["xpath"] = experiencePath
	funcs["rpath"] = recallPath
	funcs["markdown"] = renderMarkdown
}

// notFound is a 404 page with a message.
func notFound(msg string) error { return viewError{status: http.StatusNotFound, message: msg} }

func (v *Viewer) noHeuristic(http.ResponseWriter, *http.Request) error {
	return notFound("no heuristic given: pick one from the list")
}

func (v *Viewer) noSkill(http.ResponseWriter, *http.Request) error {
	return notFound("no skill given: pick one from the list")
}

func (v *Viewer) noExperience(http.ResponseWriter, *http.Request) error {
	return notFound("no task given: pick an experience from the list")
}

func (v *Viewer) noRecall(http.ResponseWriter, *http.Request) error {
	return notFound("no recall given: pick one from the list")
}

// names returns string-typed values as strings (for oneOf and selects).
func names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, s := range vs {
		out[i] = string(s)
	}
	return out
}

// anyOf is "" followed by the allowed values: a filter that may be unset.
func anyOf[T ~string](vs []T) []string { return append([]string{""}, names(vs)...) }
