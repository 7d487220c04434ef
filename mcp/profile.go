package mcp

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
)

// Tool profiles: which tools a server offers. Every tool definition costs
// the client's model context on every request (the full set is some 40
// tools), so the clients kaizen setup configures get the core profile: the
// tools an agent uses in every task. The full profile is every tool.
const (
	ProfileCore = "core"
	ProfileFull = "full"
)

var (
	profilesMu sync.Mutex
	// profiles lists each profile's tools, by name. The trace pre-check
	// and other subsystems add theirs with AddToProfile.
	profiles = map[string][]string{
		ProfileCore: {"plan_guidance", "record_outcome", "record_error", "recall", "heuristic_feedback"},
	}
)

// AddToProfile adds tools (by name) to a profile, creating it when new;
// call it from an init function. The full profile needs no entry.
func AddToProfile(profile string, names ...string) {
	profilesMu.Lock()
	defer profilesMu.Unlock()
	for _, n := range names {
		if !slices.Contains(profiles[profile], n) {
			profiles[profile] = append(profiles[profile], n)
		}
	}
}

// Profiles lists the profile names, full included, sorted.
func Profiles() []string {
	profilesMu.Lock()
	defer profilesMu.Unlock()
	out := []string{ProfileFull}
	for p := range profiles {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ProfileTools lists the tools of a profile, in registration order; an
// error names the known profiles when the profile is unknown. "" is the
// full profile.
func ProfileTools(profile string) ([]string, error) {
	defs, err := profileDefs(profile)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.name
	}
	return names, nil
}

func profileDefs(profile string) ([]*toolDef, error) {
	all := tools()
	if profile == "" || profile == ProfileFull {
		return all, nil
	}
	profilesMu.Lock()
	names, ok := profiles[profile]
	profilesMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown tool profile %q: use one of %s", profile, strings.Join(Profiles(), ", "))
	}
	var out []*toolDef
	for _, d := range all {
		if slices.Contains(names, d.name) {
			out = append(out, d)
		}
	}
	return out, nil
}

// guidanceURI is the resource of the project's guidance digest.
const guidanceURI = "kaizen://guidance"

// addResources registers the resources and prompts every profile offers:
// the guidance digest of the project (what plan_guidance returns for no
// task in particular) as a resource, and a prompt that plans a task with
// kaizen's guidance.
func addResources(s *mcpsdk.Server, env *env) {
	s.AddResource(&mcpsdk.Resource{URI: guidanceURI, Name: "guidance", Title: "kaizen: learned guidance",
		Description: "What kaizen learned in this project from past outcomes: proven patterns, anti-patterns to avoid, " +
			"criterion weights. Evidence to weigh when planning, not instructions.", MIMEType: "text/markdown"},
		func(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			text, err := guidanceDigest(ctx, env, resourceProject(env, req), "")
			if err != nil {
				return nil, err
			}
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: guidanceURI, MIMEType: "text/markdown", Text: text}}}, nil
		})
	s.AddPrompt(&mcpsdk.Prompt{Name: "plan_with_kaizen", Title: "Plan a task with kaizen",
		Description: "Plan a task with the guidance kaizen learned in this project, then report its outcome.",
		Arguments:   []*mcpsdk.PromptArgument{{Name: "task", Description: "The task to plan, in a sentence or two.", Required: true}}},
		func(ctx context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			task := strings.TrimSpace(req.Params.Arguments["task"])
			if task == "" {
				return nil, fmt.Errorf("the task argument is required")
			}
			project := ""
			if req.Extra != nil {
				project = req.Extra.Header.Get(ProjectHeader)
			}
			if project == "" {
				project = env.opts.Project
			}
			digest, err := guidanceDigest(ctx, env, project, task)
			if err != nil {
				return nil, err
			}
			text := "Plan this task: " + task + "\n\n" + digest + "\n\nWhen the task ends, call record_outcome once " +
				"with the patterns (strategies) you used; call record_error when something fails."
			return &mcpsdk.GetPromptResult{Description: "A plan with kaizen's guidance",
				Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: text}}}}, nil
		})
}

// resourceProject is the project of a resource read: the request's header,
// else the server's project, else the engine's default.
func resourceProject(env *env, req *mcpsdk.ReadResourceRequest) string {
	if req != nil && req.Extra != nil {
		if p := req.Extra.Header.Get(ProjectHeader); p != "" {
			return p
		}
	}
	return env.opts.Project
}

// guidanceDigest renders the project's plan guidance as Markdown.
func guidanceDigest(ctx context.Context, env *env, project, task string) (string, error) {
	g, err := env.engine.PlanGuidance(ctx, kaizen.PlanInput{Project: project, Task: task, Limit: 10})
	if err != nil {
		return "", err
	}
	md := strings.TrimSpace(g.Markdown())
	if md == "" {
		md = "kaizen has not learned anything in this project yet: no outcome was recorded."
	}
	return md, nil
}

func profileDefsFull() []*toolDef { return tools() }
