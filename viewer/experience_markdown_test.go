package viewer

import (
	"reflect"
	"strings"
	"testing"
)

func plain(s string) []mdSpan { return []mdSpan{{Text: s}} }

func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		want      []mdBlock
	}{
		{"empty", "", nil},
		{"front matter and headings", "---\nname: x\ndescription: \"y\"\n---\n\n# Title\n\n## When to use ##\n###### six\n####### seven",
			[]mdBlock{{Kind: "meta", Text: "name: x\ndescription: \"y\""},
				{Kind: "h", Level: 1, Tag: 3, Spans: plain("Title")},
				{Kind: "h", Level: 2, Tag: 4, Spans: plain("When to use")},
				{Kind: "h", Level: 6, Tag: 6, Spans: plain("six")},
				{Kind: "p", Spans: plain("####### seven")}}},
		{"unclosed front matter is text", "---\nname: x",
			[]mdBlock{{Kind: "hr"}, {Kind: "p", Spans: plain("name: x")}}},
		{"a hash without space is text", "#hashtag\n\\# escaped heading",
			[]mdBlock{{Kind: "p", Spans: plain("#hashtag # escaped heading")}}},
		{"paragraphs", "one\ntwo\n\nthree\r\nfour",
			[]mdBlock{{Kind: "p", Spans: plain("one two")}, {Kind: "p", Spans: plain("three four")}}},
		{"lists", "- a\n* b\n+ c\n\n3. x\n4) y\n   more of y\n   - nested is text\nafter",
			[]mdBlock{{Kind: "ul", Items: [][]mdSpan{plain("a"), plain("b"), plain("c")}},
				{Kind: "ol", Start: 3, Items: [][]mdSpan{plain("x"), plain("y more of y - nested is text")}},
				{Kind: "p", Spans: plain("after")}}},
		{"a list after a paragraph and a switch of kind", "text\n- a\n1. b",
			[]mdBlock{{Kind: "p", Spans: plain("text")}, {Kind: "ul", Items: [][]mdSpan{plain("a")}},
				{Kind: "ol", Start: 1, Items: [][]mdSpan{plain("b")}}}},
		{"fenced code is verbatim", "```go\n<script>alert(1)</script>\n  # not a heading\n```\n~~~\nopen to the end",
			[]mdBlock{{Kind: "code", Text: "<script>alert(1)</script>\n  # not a heading"}, {Kind: "code", Text: "open to the end"}}},
		{"rules", "***\n- - -\n___", []mdBlock{{Kind: "hr"}, {Kind: "hr"}, {Kind: "hr"}}},
		{"inline code", "run `go test` and ``a ` b`` or `unclosed",
			[]mdBlock{{Kind: "p", Spans: []mdSpan{{Text: "run "}, {Code: true, Text: "go test"}, {Text: " and "},
				{Code: true, Text: "a ` b"}, {Text: " or `unclosed"}}}}},
		{"links and html stay text", "[x](javascript:alert(1)) <b>bold</b> \\<i>",
			[]mdBlock{{Kind: "p", Spans: plain("[x](javascript:alert(1)) <b>bold</b> <i>")}}},
	} {
		got := renderMarkdown(tc.doc)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestRenderMarkdownBounded(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("# h\n", maxMarkdownBlocks+5)
	got := renderMarkdown(doc)
	if len(got) != maxMarkdownBlocks+1 {
		t.Fatalf("%d blocks, want %d", len(got), maxMarkdownBlocks+1)
	}
	if last := got[len(got)-1]; last.Kind != "code" || last.Text != strings.Repeat("# h\n", 5) {
		t.Errorf("the rest: %+v", last)
	}
}
