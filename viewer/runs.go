package viewer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/team"
)

// Collaboration pattern runs (seed 004, issue 16) in the viewer: a list
// of the project's runs and a page per run with the pattern's state
// diagram (the current state highlighted, the states visited and the
// transitions taken marked), the iteration against its maximum, the
// deadlines, the questions for the user, the tasks and child runs it
// created, the messages it received and sent, and its decisions with the
// event that caused each. Everything on it but the pattern's own labels is
// text agents wrote (task subjects, summaries, reasons): html/template
// escapes it in its context, SVG included, and links escape ids.

// runRoutes are the run pages, mounted like every page.
func (v *Viewer) runRoutes(page func(pattern string, h handlerFunc) server.Route) []server.Route {
	return []server.Route{
		page("GET /runs", v.runList),
		page("GET /runs/{$}", v.noRun),
		page("GET /runs/{id}", v.runPage),
	}
}

func runPath(id string) string { return "/runs/" + url.PathEscape(id) }

func init() { funcs["runpath"] = runPath }

func (v *Viewer) noRun(http.ResponseWriter, *http.Request) error {
	return notFound("no run given: pick one from the list")
}

// ---- the list ----

type runsData struct {
	base
	Team   string
	Active bool
	Items  []kaizen.RunSummary
}

func (v *Viewer) runList(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOf(r)
	if err != nil {
		return err
	}
	teamName, err := q.str("team")
	if err != nil {
		return err
	}
	active := r.URL.Query().Get("active") == "1"
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := runsData{base: v.base(r, "Pattern runs", "runs"), Team: teamName, Active: active}
	items, err := v.e.ListRuns(ctx, kaizen.RunQuery{Project: d.Project, Team: teamName, ActiveOnly: active, Limit: 500})
	if err != nil {
		return err
	}
	slices.Reverse(items) // newest first
	d.Items = items
	v.render(w, r, http.StatusOK, "runs", d, "layout")
	return nil
}

// ---- a run ----

// runMessage is one message of a run: received (an event it handled) or
// sent (a command of one of its steps).
type runMessage struct {
	At       time.Time
	Received bool
	Seq      int64
	From, To string
	Type     string
	Summary  string
}

type runTaskRow struct {
	Key, ID string
	team.RunTask
}

type runTimer struct {
	Name string
	At   time.Time
	In   string // "in 4m" / "due"
}

type runAsk struct {
	Key string
	team.RunAsk
}

type runEdgeRow struct {
	team.DiagramEdge
	Taken int
}

type runData struct {
	base
	R        *kaizen.RunInfo
	Run      team.Run
	Name     string
	Svg      svgDiagram
	Edges    []runEdgeRow
	Tasks    []runTaskRow
	Children []kaizen.RunSummary
	Timers   []runTimer
	Asks     []runAsk
	Messages []runMessage
	Mermaid  string
	Outcome  *team.Outcome
}

// maxRunMessages bounds the messages a run page lists (the newest kept).
const maxRunMessages = 300

func (v *Viewer) runPage(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	project := v.project(r)
	ri, err := v.e.GetRun(ctx, project, r.PathValue("id"))
	if err != nil {
		return err
	}
	run := ri.Run
	d := runData{R: ri, Run: run, Name: run.Pattern.Name(), Mermaid: ri.Mermaid, Outcome: run.Outcome}
	taken := map[[2]string]int{}
	for _, dec := range run.Decisions {
		if dec.From != dec.To {
			taken[[2]string{dec.From, dec.To}]++
		}
	}
	if ri.Diagram != nil {
		d.Svg = layoutDiagram(*ri.Diagram, run)
		for _, e := range ri.Diagram.Edges {
			d.Edges = append(d.Edges, runEdgeRow{e, taken[[2]string{e.From, e.To}]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(run.Tasks)) {
		d.Tasks = append(d.Tasks, runTaskRow{Key: k, ID: run.ID + "." + k, RunTask: run.Tasks[k]})
	}
	now := v.e.Now()
	for _, name := range slices.Sorted(maps.Keys(run.Timers)) {
		at := run.Timers[name]
		in := "due"
		if at.After(now) {
			in = "in " + at.Sub(now).Round(time.Second).String()
		}
		d.Timers = append(d.Timers, runTimer{Name: name, At: at, In: in})
	}
	for _, k := range slices.Sorted(maps.Keys(run.Asks)) {
		d.Asks = append(d.Asks, runAsk{Key: k, RunAsk: run.Asks[k]})
	}
	d.Messages = runMessages(ri)
	if len(run.Children) > 0 {
		all, err := v.e.ListRuns(ctx, kaizen.RunQuery{Project: project, Team: run.Team, Limit: 500})
		if err != nil {
			return err
		}
		for _, c := range all {
			if c.ParentID == run.ID {
				d.Children = append(d.Children, c)
			}
		}
	}
	d.base = v.base(r, fmt.Sprintf("Run %s (%s)", run.ID, run.Pattern), "runs")
	d.Path = "/runs"
	v.render(w, r, http.StatusOK, "run", d, "layout")
	return nil
}

// runMessages reads the messages a run handled (its message events) and
// the ones it sent (the send commands of its steps) from its event log.
func runMessages(ri *kaizen.RunInfo) []runMessage {
	var out []runMessage
	for _, ev := range ri.Events {
		var e team.Event
		if json.Unmarshal(ev.Event, &e) == nil && e.Kind == team.EventMessage && e.Message != nil {
			m := e.Message
			out = append(out, runMessage{At: ev.At, Received: true, Seq: m.Seq, From: m.From, To: m.To, Type: string(m.Type), Summary: m.Summary})
		}
		var cmds []team.Command
		if json.Unmarshal(ev.Commands, &cmds) != nil {
			continue
		}
		for _, c := range cmds {
			if c.Kind == team.CmdSendMessage && c.Message != nil {
				out = append(out, runMessage{At: ev.At, From: "this run", To: c.Message.To, Type: string(c.Message.Type), Summary: c.Message.Summary})
			}
		}
	}
	if len(out) > maxRunMessages {
		out = out[len(out)-maxRunMessages:]
	}
	return out
}

// ---- the state diagram as SVG ----

// svgDiagram is a pattern's state diagram laid out for SVG: the working
// states in a row, the terminal states in a row below, transitions as
// arcs (forward above, backward below, self-loops as loops, to terminal
// states downwards). The current state is highlighted, visited states and
// taken transitions are marked. Labels are the pattern's own; state names
// and labels are escaped by the template like any text.
type svgDiagram struct {
	W, H  int
	Nodes []svgNode
	Edges []svgEdge
}

type svgNode struct {
	Name, Label                string
	X, Y, W, H, TX, TY, LY     int
	Current, Visited, Terminal bool
	Start                      bool // entered from the start
}

type svgEdge struct {
	D     string // path data: numbers and commands only
	Label string
	Taken bool
}

const (
	nodeW, nodeH = 150, 46
	gapX         = 40
	rowY         = 90
	termY        = 330
	marginX      = 20
)

func layoutDiagram(d team.Diagram, run team.Run) svgDiagram {
	visited := map[string]bool{run.State: true}
	taken := map[[2]string]bool{}
	for _, dec := range run.Decisions {
		visited[dec.To] = true
		if dec.From != "" {
			visited[dec.From] = true
		}
		taken[[2]string{dec.From, dec.To}] = dec.From != dec.To
	}
	starts := map[string]bool{}
	for _, e := range d.Edges {
		if e.From == "" {
			starts[e.To] = true
		}
	}
	var out svgDiagram
	pos := map[string]int{}
	var work, term int
	for _, s := range d.States {
		n := svgNode{Name: s.Name, Label: s.Label, W: nodeW, H: nodeH, Terminal: s.Terminal,
			Current: s.Name == run.State, Visited: visited[s.Name], Start: starts[s.Name]}
		if s.Terminal {
			n.X, n.Y = marginX+term*(nodeW+gapX), termY
			term++
		} else {
			n.X, n.Y = marginX+work*(nodeW+gapX), rowY
			work++
		}
		n.TX, n.TY, n.LY = n.X+nodeW/2, n.Y+19, n.Y+36
		pos[s.Name] = len(out.Nodes)
		out.Nodes = append(out.Nodes, n)
	}
	out.W = marginX*2 + max(work, term)*(nodeW+gapX) - gapX
	out.H = termY + nodeH + 90
	for _, e := range d.Edges {
		if e.From == "" {
			continue // the start is marked on the node
		}
		a, okA := pos[e.From]
		b, okB := pos[e.To]
		if !okA || !okB {
			continue
		}
		na, nb := out.Nodes[a], out.Nodes[b]
		var path string
		switch {
		case a == b:
			x, y := na.X+nodeW-30, na.Y
			path = fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x, y, x-5, y-34, x+35, y-34, x+20, y)
		case nb.Terminal:
			x1, y1 := na.X+nodeW/2, na.Y+nodeH
			x2, y2 := nb.X+nodeW/2, nb.Y
			path = fmt.Sprintf("M%d %d Q%d %d %d %d", x1, y1, (x1+x2)/2, (y1+y2)/2+10, x2, y2)
		case nb.X > na.X:
			x1, x2, y := na.X+nodeW/2+10, nb.X+nodeW/2-10, na.Y
			path = fmt.Sprintf("M%d %d Q%d %d %d %d", x1, y, (x1+x2)/2, y-24-(x2-x1)/8, x2, y)
		default:
			x1, x2, y := na.X+nodeW/2-10, nb.X+nodeW/2+10, na.Y+nodeH
			path = fmt.Sprintf("M%d %d Q%d %d %d %d", x1, y, (x1+x2)/2, y+24+(x1-x2)/8, x2, y)
		}
		out.Edges = append(out.Edges, svgEdge{D: path, Label: e.From + " → " + e.To + ": " + e.Label, Taken: taken[[2]string{e.From, e.To}]})
	}
	// draw taken transitions last, on top
	slices.SortStableFunc(out.Edges, func(x, y svgEdge) int { return cmp.Compare(b2i(x.Taken), b2i(y.Taken)) })
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
