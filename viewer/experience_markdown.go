package viewer

import (
	"regexp"
	"strconv"
	"strings"
)

// A minimal Markdown reader for SKILL.md documents. It never produces
// markup: it splits a document into blocks (front matter, headings,
// paragraphs, bulleted and numbered lists, fenced code, rules) made of
// plain-text spans, and the template writes each block's element with
// every text escaped by html/template. It knows no raw HTML (shown as
// text), no links or images (their source is shown as text, so no URL of
// a document ever becomes an href or src), and no emphasis.

// mdBlock is one block of a document.
type mdBlock struct {
	// Kind is "meta" (front matter), "h", "p", "ul", "ol", "code" or "hr".
	Kind string
	// Level is a heading's level (1–6); Tag is the heading element the
	// page uses for it (h3–h6: the page's own h1 and h2 come first).
	Level, Tag int
	// Spans are a heading's or paragraph's text.
	Spans []mdSpan
	// Items are a list's items.
	Items [][]mdSpan
	// Start is a numbered list's first number.
	Start int
	// Text is the content of front matter and code blocks, verbatim.
	Text string
}

// mdSpan is a run of text, code (a `code span`) or not.
type mdSpan struct {
	Code bool
	Text string
}

var (
	mdHeading  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	mdBullet   = regexp.MustCompile(`^ {0,3}[-*+][ \t]+(.*)$`)
	mdNumbered = regexp.MustCompile(`^ {0,3}(\d{1,9})[.)][ \t]+(.*)$`)
	mdFence    = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	mdRule     = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
)

// maxMarkdownBlocks bounds the blocks read from one document; the rest is
// shown as one code block.
const maxMarkdownBlocks = 2000

// renderMarkdown splits a document into blocks.
func renderMarkdown(doc string) []mdBlock {
	doc = strings.ReplaceAll(strings.ReplaceAll(doc, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(doc, "\n")
	var out []mdBlock
	i := 0
	// Front matter: a first line "---" up to the next "---".
	if len(lines) > 1 && strings.TrimRight(lines[0], " \t") == "---" {
		for j := 1; j < len(lines); j++ {
			if strings.TrimRight(lines[j], " \t") == "---" {
				out = append(out, mdBlock{Kind: "meta", Text: strings.Join(lines[1:j], "\n")})
				i = j + 1
				break
			}
		}
	}
	var para []string
	var list *mdBlock
	flush := func() {
		if len(para) > 0 {
			out = append(out, mdBlock{Kind: "p", Spans: mdInline(strings.Join(para, " "))})
			para = nil
		}
		if list != nil {
			out = append(out, *list)
			list = nil
		}
	}
	for i < len(lines) {
		if len(out) >= maxMarkdownBlocks {
			flush()
			out = append(out, mdBlock{Kind: "code", Text: strings.Join(lines[i:], "\n")})
			break
		}
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case list != nil && (strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "\t")):
			// A continuation of the last item (indented: nested
			// lists and fences in an item are read as its text).
			last := &list.Items[len(list.Items)-1]
			*last = mdJoin(*last, mdInline(" "+trimmed))
		case mdFence.MatchString(line):
			flush()
			fence := mdFence.FindStringSubmatch(line)[1]
			var code []string
			i++
			for i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), fence) {
				code = append(code, lines[i])
				i++
			}
			out = append(out, mdBlock{Kind: "code", Text: strings.Join(code, "\n")})
		case mdRule.MatchString(line):
			flush()
			out = append(out, mdBlock{Kind: "hr"})
		case mdHeading.MatchString(line):
			flush()
			m := mdHeading.FindStringSubmatch(line)
			level := len(m[1])
			out = append(out, mdBlock{Kind: "h", Level: level, Tag: min(level+2, 6), Spans: mdInline(m[2])})
		case mdBullet.MatchString(line):
			if len(para) > 0 || (list != nil && list.Kind != "ul") {
				flush()
			}
			if list == nil {
				list = &mdBlock{Kind: "ul"}
			}
			list.Items = append(list.Items, mdInline(mdBullet.FindStringSubmatch(line)[1]))
		case mdNumbered.MatchString(line):
			if len(para) > 0 || (list != nil && list.Kind != "ol") {
				flush()
			}
			m := mdNumbered.FindStringSubmatch(line)
			if list == nil {
				start, _ := strconv.Atoi(m[1])
				list = &mdBlock{Kind: "ol", Start: start}
			}
			list.Items = append(list.Items, mdInline(m[2]))
		default:
			if list != nil {
				flush()
			}
			para = append(para, trimmed)
		}
		i++
	}
	flush()
	return out
}

// mdInline splits text into plain and code spans, resolving backslash
// escapes of punctuation outside code.
func mdInline(s string) []mdSpan {
	var out []mdSpan
	var b strings.Builder
	emit := func(code bool, text string) {
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Code == code && !code {
			out[n-1].Text += text
			return
		}
		out = append(out, mdSpan{Code: code, Text: text})
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i += 2
		case c == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			ticks := s[i : i+n]
			end := strings.Index(s[i+n:], ticks)
			if end < 0 {
				b.WriteString(ticks)
				i += n
				continue
			}
			emit(false, b.String())
			b.Reset()
			code := s[i+n : i+n+end]
			if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.TrimSpace(code) != "" {
				code = code[1 : len(code)-1]
			}
			out = append(out, mdSpan{Code: true, Text: code})
			i += n + end + n
		default:
			b.WriteByte(c)
			i++
		}
	}
	emit(false, b.String())
	return out
}

// mdJoin appends spans, merging adjacent plain text.
func mdJoin(a, b []mdSpan) []mdSpan {
	for _, sp := range b {
		if n := len(a); n > 0 && !a[n-1].Code && !sp.Code {
			a[n-1].Text += sp.Text
			continue
		}
		a = append(a, sp)
	}
	return a
}

func isASCIIPunct(c byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}
