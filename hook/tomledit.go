package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its settings in config.toml, which users edit by hand and
// comment. Decoding and re-encoding it would drop the comments and reorder
// the tables, so setup edits it as lines: it appends (or updates in place)
// its own [mcp_servers.kaizen] table and one `codex_hooks = true` line, and
// uninstall removes exactly those. Every edit is checked by decoding the
// result and comparing it with the original: everything but kaizen's keys
// must be unchanged, or nothing is written.

// tomlMarker ends every line setup adds outside its own table.
const tomlMarker = "# added by kaizen setup"

// tomlTableComment precedes the [mcp_servers.kaizen] table setup adds.
const tomlTableComment = "# kaizen MCP server: added by `kaizen setup codex`, removed by `kaizen setup codex --uninstall`"

type tomlLines struct {
	lines []string
	// code[i] is false when line i starts inside a multi-line string.
	code []bool
}

func splitTOML(data []byte) *tomlLines {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	t := &tomlLines{}
	if text != "" {
		t.lines = strings.Split(text, "\n")
	}
	t.rescan()
	return t
}

func (t *tomlLines) bytes() []byte {
	if len(t.lines) == 0 {
		return nil
	}
	return []byte(strings.Join(t.lines, "\n") + "\n")
}

// rescan recomputes which lines start outside multi-line strings.
func (t *tomlLines) rescan() {
	t.code = make([]bool, len(t.lines))
	state := 0 // 0 code, 1 inside """, 2 inside '''
	for i, line := range t.lines {
		t.code[i] = state == 0
		state = scanTOMLLine(line, state)
	}
}

// scanTOMLLine returns the multi-line string state at the end of line.
func scanTOMLLine(line string, state int) int {
	for i := 0; i < len(line); {
		switch state {
		case 1:
			switch {
			case line[i] == '\\':
				i += 2
			case strings.HasPrefix(line[i:], `"""`):
				state, i = 0, i+3
			default:
				i++
			}
			continue
		case 2:
			if strings.HasPrefix(line[i:], `'''`) {
				state, i = 0, i+3
			} else {
				i++
			}
			continue
		}
		switch {
		case strings.HasPrefix(line[i:], `"""`):
			state, i = 1, i+3
		case strings.HasPrefix(line[i:], `'''`):
			state, i = 2, i+3
		case line[i] == '"':
			i++
			for i < len(line) && line[i] != '"' {
				if line[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case line[i] == '\'':
			i++
			for i < len(line) && line[i] != '\'' {
				i++
			}
			i++
		case line[i] == '#':
			return state
		default:
			i++
		}
	}
	return state
}

// tomlHeader is a table header line: [a.b] or [[a.b]].
type tomlHeader struct {
	line  int
	key   []string
	array bool
}

func (t *tomlLines) headers() []tomlHeader {
	var hs []tomlHeader
	for i, line := range t.lines {
		if !t.code[i] {
			continue
		}
		if key, array, ok := parseTOMLHeader(line); ok {
			hs = append(hs, tomlHeader{line: i, key: key, array: array})
		}
	}
	return hs
}

// blockEnd is the line after the last line of the table whose header is
// at line h: the next header, or the end of the file.
func (t *tomlLines) blockEnd(h int) int {
	for i := h + 1; i < len(t.lines); i++ {
		if t.code[i] {
			if _, _, ok := parseTOMLHeader(t.lines[i]); ok {
				return i
			}
		}
	}
	return len(t.lines)
}

// parseTOMLHeader recognises a table header line and splits its key.
func parseTOMLHeader(line string) (key []string, array, ok bool) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "[") {
		return nil, false, false
	}
	s = s[1:]
	if strings.HasPrefix(s, "[") {
		array, s = true, s[1:]
	}
	end := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case '\'':
			i++
			for i < len(s) && s[i] != '\'' {
				i++
			}
		case ']':
			end = i
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return nil, false, false
	}
	rest := s[end+1:]
	if array {
		if !strings.HasPrefix(rest, "]") {
			return nil, false, false
		}
		rest = rest[1:]
	}
	if rest = strings.TrimSpace(rest); rest != "" && !strings.HasPrefix(rest, "#") {
		return nil, false, false
	}
	key, ok = splitTOMLKey(s[:end])
	return key, array, ok
}

// splitTOMLKey splits a dotted key of bare and quoted parts.
func splitTOMLKey(s string) ([]string, bool) {
	var parts []string
	for {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, false
		}
		var part string
		switch s[0] {
		case '"':
			i := 1
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return nil, false
			}
			if err := json.Unmarshal([]byte(s[:i+1]), &part); err != nil {
				return nil, false
			}
			s = s[i+1:]
		case '\'':
			i := strings.IndexByte(s[1:], '\'')
			if i < 0 {
				return nil, false
			}
			part, s = s[1:i+1], s[i+2:]
		default:
			i := 0
			for i < len(s) && (isBareKeyChar(s[i])) {
				i++
			}
			if i == 0 {
				return nil, false
			}
			part, s = s[:i], s[i:]
		}
		parts = append(parts, part)
		s = strings.TrimSpace(s)
		if s == "" {
			return parts, true
		}
		if s[0] != '.' {
			return nil, false
		}
		s = s[1:]
	}
}

func isBareKeyChar(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func keyIs(key []string, want ...string) bool { return slicesEqual(key, want) }

func keyHasPrefix(key []string, prefix ...string) bool {
	return len(key) >= len(prefix) && slicesEqual(key[:len(prefix)], prefix)
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlQuote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// decodeTOML decodes a document into plain maps, for comparisons.
func decodeTOML(data []byte) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(string(data), &m); err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("line %d: %s", perr.Position.Line, perr.Message)
		}
		return nil, err
	}
	return m, nil
}

func tomlTable(m map[string]any, key ...string) (map[string]any, bool) {
	cur := m
	for _, k := range key {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// withoutKaizen returns a copy of a decoded Codex config without what
// setup manages: mcp_servers.kaizen, and features.codex_hooks when
// dropHooksFlag (tables left empty by the removal are dropped too).
func withoutKaizen(m map[string]any, dropHooksFlag bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if servers, ok := out["mcp_servers"].(map[string]any); ok {
		if _, has := servers["kaizen"]; has {
			c := make(map[string]any, len(servers))
			for k, v := range servers {
				if k != "kaizen" {
					c[k] = v
				}
			}
			if len(c) == 0 {
				delete(out, "mcp_servers")
			} else {
				out["mcp_servers"] = c
			}
		}
	}
	if features, ok := out["features"].(map[string]any); ok && dropHooksFlag {
		if _, has := features["codex_hooks"]; has {
			c := make(map[string]any, len(features))
			for k, v := range features {
				if k != "codex_hooks" {
					c[k] = v
				}
			}
			if len(c) == 0 {
				delete(out, "features")
			} else {
				out["features"] = c
			}
		}
	}
	return out
}

// codexServer is the [mcp_servers.kaizen] table setup writes.
type codexServer struct {
	Command string
	Args    []string
}

func (s codexServer) matches(m map[string]any) bool {
	kz, ok := tomlTable(m, "mcp_servers", "kaizen")
	if !ok {
		return false
	}
	if cmd, _ := kz["command"].(string); cmd != s.Command {
		return false
	}
	args, _ := kz["args"].([]any)
	if len(args) != len(s.Args) {
		return false
	}
	for i, a := range args {
		if str, _ := a.(string); str != s.Args[i] {
			return false
		}
	}
	return true
}

// codexConfigInstall adds (or updates) kaizen's MCP server and turns on the
// hooks feature in a Codex config.toml. It returns the new content (nil
// when nothing changes) and notes for the user.
func codexConfigInstall(data []byte, srv codexServer) ([]byte, []string, error) {
	orig, err := decodeTOML(data)
	if err != nil {
		return nil, nil, err
	}
	t := splitTOML(data)
	var notes []string
	changed := false

	if !srv.matches(orig) {
		var kz *tomlHeader
		for _, h := range t.headers() {
			if !h.array && keyIs(h.key, "mcp_servers", "kaizen") {
				kz = &h
				break
			}
		}
		_, defined := tomlTable(orig, "mcp_servers", "kaizen")
		switch {
		case kz != nil:
			if err := t.setKey(kz.line, "command", tomlQuote(srv.Command)); err != nil {
				return nil, nil, err
			}
			if err := t.setKey(kz.line, "args", tomlArray(srv.Args)); err != nil {
				return nil, nil, err
			}
		case defined:
			return nil, nil, errors.New("mcp_servers.kaizen is defined without its own [mcp_servers.kaizen] table " +
				"(as an inline table or dotted keys); setup cannot update that form: remove it, or set command and args by hand")
		default:
			t.appendBlock(tomlTableComment, "[mcp_servers.kaizen]",
				"command = "+tomlQuote(srv.Command), "args = "+tomlArray(srv.Args))
		}
		changed = true
	}

	// Hooks are on by default since Codex 0.124 ("hooks" is the stable
	// feature key; "codex_hooks" a deprecated alias that makes Codex print
	// a deprecation notice at every start): setup writes no flag, and
	// removes the one an earlier setup wrote.
	features, _ := tomlTable(orig, "features")
	for _, key := range []string{"hooks", "codex_hooks"} {
		if v, ok := features[key]; ok && v == false {
			notes = append(notes, fmt.Sprintf("[features] %s = false: Codex runs no hooks, kaizen's included, until you remove that line", key))
		}
	}
	removedFlag := t.removeKaizenFlag()
	changed = changed || removedFlag
	if !changed {
		return nil, notes, nil
	}
	out := t.bytes()
	after, err := decodeTOML(out)
	if err != nil {
		return nil, nil, fmt.Errorf("internal error: the edited file does not parse (%v); nothing was written", err)
	}
	if !reflect.DeepEqual(withoutKaizen(after, false), withoutKaizen(orig, removedFlag)) || !srv.matches(after) {
		return nil, nil, errors.New("internal error: the edit would change more than kaizen's entries; nothing was written")
	}
	return out, notes, nil
}

// removeKaizenFlag removes the `codex_hooks = true` line an earlier setup
// wrote (marked as kaizen's), and the [features] table when setup created
// it and nothing else is left in it. It reports whether it removed the
// flag.
func (t *tomlLines) removeKaizenFlag() bool {
	removedFlag := false
	for i := 0; i < len(t.lines); i++ {
		line := strings.TrimSpace(t.lines[i])
		if t.code[i] && strings.HasPrefix(line, "codex_hooks") && strings.HasSuffix(line, tomlMarker) {
			t.remove(i, i+1)
			removedFlag = true
			i--
		}
	}
	for _, h := range t.headers() {
		if keyIs(h.key, "features") && strings.HasSuffix(strings.TrimSpace(t.lines[h.line]), tomlMarker) {
			end := t.blockEnd(h.line)
			empty := true
			for _, l := range t.lines[h.line+1 : end] {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					empty = false
				}
			}
			if empty {
				t.remove(h.line, end)
			}
			break
		}
	}
	return removedFlag
}

func hasFlagNow(m map[string]any) bool {
	f, _ := tomlTable(m, "features")
	return f["codex_hooks"] == true
}

// codexConfigUninstall removes what codexConfigInstall added. It returns
// the new content (nil when nothing changes; empty when the file would be
// left empty).
func codexConfigUninstall(data []byte) ([]byte, bool, error) {
	orig, err := decodeTOML(data)
	if err != nil {
		return nil, false, err
	}
	t := splitTOML(data)
	changed := false
	// kaizen's tables, with their subtables and setup's comment line
	for {
		var kz *tomlHeader
		for _, h := range t.headers() {
			if keyHasPrefix(h.key, "mcp_servers", "kaizen") {
				kz = &h
				break
			}
		}
		if kz == nil {
			break
		}
		start, end := kz.line, t.blockEnd(kz.line)
		if start > 0 && strings.TrimSpace(t.lines[start-1]) == tomlTableComment {
			start--
		}
		t.remove(start, end)
		changed = true
	}
	// the hooks flag an earlier setup wrote, and the [features] table if
	// setup created it
	removedFlag := t.removeKaizenFlag()
	changed = changed || removedFlag
	if !changed {
		return nil, false, nil
	}
	for len(t.lines) > 0 && strings.TrimSpace(t.lines[len(t.lines)-1]) == "" {
		t.lines = t.lines[:len(t.lines)-1]
	}
	t.rescan()
	out := t.bytes()
	if len(out) == 0 {
		return nil, true, nil
	}
	after, err := decodeTOML(out)
	if err != nil {
		return nil, false, fmt.Errorf("internal error: the edited file does not parse (%v); nothing was written", err)
	}
	if !reflect.DeepEqual(withoutKaizen(after, false), withoutKaizen(orig, removedFlag)) {
		return nil, false, errors.New("internal error: uninstalling would change more than kaizen's entries; nothing was written")
	}
	return out, false, nil
}

func (t *tomlLines) insert(at int, lines ...string) {
	t.lines = append(t.lines[:at], append(lines, t.lines[at:]...)...)
	t.rescan()
}

// remove deletes lines [start, end) and a blank line left doubled by it.
func (t *tomlLines) remove(start, end int) {
	t.lines = append(t.lines[:start], t.lines[end:]...)
	if start > 0 && strings.TrimSpace(t.lines[start-1]) == "" &&
		(start == len(t.lines) || strings.TrimSpace(t.lines[start]) == "") {
		t.lines = append(t.lines[:start-1], t.lines[start:]...)
	}
	t.rescan()
}

// appendBlock adds lines at the end of the file, after a blank line.
func (t *tomlLines) appendBlock(comment string, lines ...string) {
	if len(t.lines) > 0 && strings.TrimSpace(t.lines[len(t.lines)-1]) != "" {
		t.lines = append(t.lines, "")
	}
	if comment != "" {
		t.lines = append(t.lines, comment)
	}
	t.lines = append(t.lines, lines...)
	t.rescan()
}

// setKey sets key = value in the table whose header is at line h,
// replacing the existing assignment (which may span lines) or inserting
// one right after the header.
func (t *tomlLines) setKey(h int, key, value string) error {
	end := t.blockEnd(h)
	for i := h + 1; i < end; i++ {
		if !t.code[i] {
			continue
		}
		s := strings.TrimSpace(t.lines[i])
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		if k, ok := splitTOMLKey(name); !ok || !keyIs(k, key) {
			continue
		}
		last := valueEnd(t.lines, i, strings.TrimSpace(rest))
		if last < 0 {
			return fmt.Errorf("cannot find the end of %s in [mcp_servers.kaizen]; fix the file or set it by hand", key)
		}
		t.lines = append(t.lines[:i], append([]string{key + " = " + value}, t.lines[last+1:]...)...)
		t.rescan()
		return nil
	}
	t.insert(h+1, key+" = "+value)
	return nil
}

// valueEnd returns the last line of the value that starts on line i with
// text v (arrays may span lines), or -1.
func valueEnd(lines []string, i int, v string) int {
	if !strings.HasPrefix(v, "[") {
		return i
	}
	depth := 0
	text := v
	for j := i; j < len(lines); j++ {
		if j > i {
			text = lines[j]
		}
		for k := 0; k < len(text); k++ {
			switch text[k] {
			case '"':
				k++
				for k < len(text) && text[k] != '"' {
					if text[k] == '\\' {
						k++
					}
					k++
				}
			case '\'':
				k++
				for k < len(text) && text[k] != '\'' {
					k++
				}
			case '#':
				k = len(text)
			case '[':
				depth++
			case ']':
				depth--
				if depth == 0 {
					return j
				}
			}
		}
	}
	return -1
}
