package model

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		reply    string
		want     string
		fenced   bool
		repaired bool
	}{
		{name: "bare object", reply: `{"a": 1}`, want: `{"a": 1}`},
		{name: "bare array with spaces", reply: "\n  [1, 2, {\"b\": null}]  \n", want: `[1, 2, {"b": null}]`},
		{name: "byte order mark", reply: "\uFEFF{\"a\":true}", want: `{"a":true}`},
		{name: "fenced json", reply: "Here is the result:\n```json\n{\"goal\": \"ship\"}\n```\nLet me know!", want: `{"goal": "ship"}`, fenced: true},
		{name: "fenced without language", reply: "```\n[\"x\"]\n```", want: `["x"]`, fenced: true},
		{name: "json fence preferred over an earlier other fence", reply: "```bash\necho {\"no\": 1}\n```\n```json\n{\"yes\": 2}\n```", want: `{"yes": 2}`, fenced: true},
		{name: "prose before and after", reply: `Sure! The extraction is {"signals": [{"type": "reject"}]} — hope that helps.`, want: `{"signals": [{"type": "reject"}]}`},
		{name: "braces in prose first", reply: `Use the {name} placeholder. Result: {"name": "x"}`, want: `{"name": "x"}`},
		{name: "first of two objects", reply: `{"first": 1} and then {"second": 2}`, want: `{"first": 1}`},
		{name: "brackets inside strings", reply: `{"rule": "never write } or ] in \"quotes\"", "n": [1]}`, want: `{"rule": "never write } or ] in \"quotes\"", "n": [1]}`},
		{name: "unicode", reply: "结果如下：{\"目标\": \"部署前运行迁移\"}。", want: `{"目标": "部署前运行迁移"}`},
		{name: "think block skipped", reply: "<think>maybe {\"draft\": true}?</think>\n{\"final\": true}", want: `{"final": true}`},
		{name: "escapes", reply: `{"s": "tab\t? no: \\t \u00e9 \/"}`, want: `{"s": "tab\t? no: \\t \u00e9 \/"}`},
		{name: "valid JSON with a fence inside", reply: "{\"md\": \"```\",\n\"x\": [\"\", {\"inner\": 1}], \"end\": \"```\"}", want: "{\"md\": \"```\",\n\"x\": [\"\", {\"inner\": 1}], \"end\": \"```\"}"},
		{name: "nested deep", reply: `x [[[[{"a":[[]]}]]]] y`, want: `[[[[{"a":[[]]}]]]]`},

		// Truncated output: closed when that gives valid JSON.
		{name: "cut inside a string", reply: `{"goal": "deploy the servi`, want: `{"goal": "deploy the servi"}`, repaired: true},
		{name: "cut inside an array", reply: "```json\n{\"steps\": [\"build\", \"test\"", want: `{"steps": ["build", "test"]}`, fenced: true, repaired: true},
		{name: "cut after a comma", reply: `{"a": 1, "b": [true, false,`, want: `{"a": 1, "b": [true, false]}`, repaired: true},
		{name: "cut after a key", reply: `{"a": 1, "b":`, want: `{"a": 1}`, repaired: true},
		{name: "cut inside a key", reply: `{"a": 1, "bee`, want: `{"a": 1}`, repaired: true},
		{name: "cut inside a number", reply: `{"a": "x", "confidence": 0.`, want: `{"a": "x"}`, repaired: true},
		{name: "cut inside a literal", reply: `{"a": [1, tr`, want: `{"a": [1, true]}`, repaired: true},
		{name: "cut inside an escape", reply: `{"a": "line\`, want: `{"a": "line"}`, repaired: true},
		{name: "cut inside a unicode escape", reply: `{"a": "x\u00`, want: `{"a": "x"}`, repaired: true},
		{name: "cut inside a multibyte rune", reply: "{\"a\": \"部署\xe8\xbf", want: `{"a": "部署"}`, repaired: true},
		{name: "cut after nested object", reply: `{"x": {"y": 1}`, want: `{"x": {"y": 1}}`, repaired: true},
		{name: "prose then cut", reply: `Here you go: [{"kind": "avoid"}, {"kind": "pre`, want: `[{"kind": "avoid"}, {"kind": "pre"}]`, repaired: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x, err := ExtractJSONDetailed(tc.reply)
			if err != nil {
				t.Fatalf("ExtractJSON(%q): %v", tc.reply, err)
			}
			if string(x.JSON) != tc.want {
				t.Errorf("JSON = %s, want %s", x.JSON, tc.want)
			}
			if !json.Valid(x.JSON) {
				t.Errorf("result is not valid JSON: %s", x.JSON)
			}
			if x.Fenced != tc.fenced || x.Repaired != tc.repaired {
				t.Errorf("fenced=%t repaired=%t, want %t %t", x.Fenced, x.Repaired, tc.fenced, tc.repaired)
			}
			if !x.Repaired && !strings.HasPrefix(tc.reply[x.Offset:], string(x.JSON)) {
				t.Errorf("offset %d does not point at the JSON", x.Offset)
			}
			raw, err := ExtractJSON(tc.reply)
			if err != nil || string(raw) != tc.want {
				t.Errorf("ExtractJSON = %s, %v", raw, err)
			}
		})
	}
}

func TestExtractJSONErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		reply   string
		kind    JSONErrorKind
		message []string // substrings of Error()
	}{
		{name: "empty", reply: "", kind: JSONEmpty, message: []string{"empty reply"}},
		{name: "blank", reply: " \n\t ", kind: JSONEmpty},
		{name: "prose only", reply: "I'm sorry, I can't help with that.", kind: JSONNotFound, message: []string{"no JSON object or array", `I'm sorry`}},
		{name: "bare scalar", reply: `"just a string"`, kind: JSONNotFound},
		{name: "unquoted keys", reply: `{goal: "x"}`, kind: JSONNotFound},
		{name: "double comma", reply: `{"a": 1,, "b": 2}`, kind: JSONMalformed, message: []string{"malformed JSON at offset 8", "expected an object key", `{\"a\": 1,, \"b\"`}},
		{name: "single quotes", reply: `Result: {"a": 'x'}`, kind: JSONMalformed, message: []string{"expected a value"}},
		{name: "trailing comma", reply: `{"a": [1, 2,]}`, kind: JSONMalformed},
		{name: "bad number", reply: `{"a": 01}`, kind: JSONMalformed, message: []string{"invalid number"}},
		{name: "bad escape", reply: `{"a": "\x"}`, kind: JSONMalformed, message: []string{"invalid escape"}},
		{name: "control character", reply: "{\"a\": \"line\nbreak\"}", kind: JSONMalformed, message: []string{"control character"}},
		{name: "mismatched brackets", reply: `{"a": [1, 2}`, kind: JSONMalformed},
		{name: "cut right after the bracket", reply: `Result: {`, kind: JSONTruncated, message: []string{"truncated JSON that cannot be repaired"}},
		{name: "cut inside the first key", reply: `{"goa`, kind: JSONTruncated},
		{name: "closed fence with incomplete JSON", reply: "```json\n{\"a\": [1, 2\n```", kind: JSONTruncated, message: []string{"closed code block is incomplete"}},
		{name: "think block never closed", reply: "<think>I should answer {\"a\": 1} but", kind: JSONEmpty, message: []string{"inside its <think> block"}},
		{name: "only a think block", reply: "<think>hmm</think>  ", kind: JSONEmpty},
		{name: "too large", reply: "{" + strings.Repeat(" ", MaxReplyBytes) + "}", kind: JSONTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw, err := ExtractJSON(tc.reply)
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("ExtractJSON(%q) = %s, %v; want a *JSONError", tc.reply, raw, err)
			}
			if je.Kind != tc.kind {
				t.Errorf("kind = %v, want %v (%v)", je.Kind, tc.kind, err)
			}
			for _, m := range tc.message {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
			if len(je.Excerpt) > 400 {
				t.Errorf("excerpt is %d bytes long", len(je.Excerpt))
			}
		})
	}
}

// Cutting a valid document anywhere gives either a repaired valid value or
// a clear error: never invalid JSON, never a panic.
func TestExtractJSONTruncatedAtEveryByte(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"goal":"部署","successCriteria":["a","b\"c"],"failedAttempts":[{"attemptLabel":"x","replacedBy":null}],"n":-12.5e+3,"ok":true,"none":null,"esc":"\u00e9\n"}`,
		`[{"kind":"avoid","trigger":"when x","rule":"do not y","why":"z","evidence":"e"},[],{},[[1,2],[3]]]`,
	}
	for _, doc := range docs {
		for cut := 1; cut < len(doc); cut++ {
			reply := "Answer:\n" + doc[:cut]
			x, err := ExtractJSONDetailed(reply)
			if err != nil {
				var je *JSONError
				if !errors.As(err, &je) {
					t.Fatalf("cut %d: error %T %v", cut, err, err)
				}
				continue
			}
			if !json.Valid(x.JSON) {
				t.Fatalf("cut %d: invalid JSON %s", cut, x.JSON)
			}
			if !x.Repaired {
				t.Fatalf("cut %d: %s not marked repaired", cut, x.JSON)
			}
		}
	}
}

type experience struct {
	Goal            string   `json:"goal"`
	SuccessCriteria []string `json:"successCriteria"`
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	t.Run("fenced with prose", func(t *testing.T) {
		got, err := DecodeJSON[experience]("Here:\n```json\n{\"goal\": \"g\", \"successCriteria\": [\"c\"]}\n```", DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(experience{Goal: "g", SuccessCriteria: []string{"c"}}, got); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("skips a candidate of the wrong shape", func(t *testing.T) {
		got, err := DecodeJSON[experience](`As noted in [1], the answer is {"goal": "g"}`, DecodeOptions{})
		if err != nil || got.Goal != "g" {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
	t.Run("unknown fields allowed by default", func(t *testing.T) {
		if _, err := DecodeJSON[experience](`{"goal": "g", "extra": 1}`, DecodeOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unknown fields rejected when asked", func(t *testing.T) {
		_, err := DecodeJSON[experience](`{"goal": "g", "extra": 1}`, DecodeOptions{DisallowUnknownFields: true})
		var je *JSONError
		if !errors.As(err, &je) || je.Kind != JSONMismatch || !strings.Contains(err.Error(), `unknown field "extra"`) {
			t.Fatalf("err = %v", err)
		}
		if je.Err == nil {
			t.Error("the decoding error is not wrapped")
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		_, err := DecodeJSON[experience](`{"goal": 5}`, DecodeOptions{})
		var je *JSONError
		if !errors.As(err, &je) || je.Kind != JSONMismatch {
			t.Fatalf("err = %v", err)
		}
		var ute *json.UnmarshalTypeError
		if !errors.As(err, &ute) {
			t.Errorf("want the *json.UnmarshalTypeError inside: %v", err)
		}
	})
	t.Run("repaired accepted by default", func(t *testing.T) {
		got, err := DecodeJSON[experience](`{"goal": "g", "successCriteria": ["a", "b`, DecodeOptions{})
		if err != nil || len(got.SuccessCriteria) != 2 {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
	t.Run("repaired refused when asked", func(t *testing.T) {
		_, err := DecodeJSON[experience](`{"goal": "g", "successCriteria": ["a", "b`, DecodeOptions{RejectRepaired: true})
		var je *JSONError
		if !errors.As(err, &je) || je.Kind != JSONTruncated {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no JSON", func(t *testing.T) {
		_, err := DecodeJSON[experience](`no`, DecodeOptions{})
		var je *JSONError
		if !errors.As(err, &je) || je.Kind != JSONNotFound {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestExtractJSONPathologicalInputIsBounded(t *testing.T) {
	t.Parallel()
	// Every '[' starts a candidate that fails at the end: quadratic without
	// the work bound.
	reply := strings.Repeat("[", 200_000) + "x"
	_, err := ExtractJSON(reply)
	var je *JSONError
	if !errors.As(err, &je) || je.Kind != JSONTooLarge {
		t.Fatalf("err = %v, want a too-large error", err)
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, seed := range []string{
		`{"a": 1}`, "```json\n{\"a\": [1, 2]}\n```", `prose {"a": "b"} prose`, `{"a": "trunc`,
		`[1, 2, {"x": tr`, `{"a":1,,}`, `<think>{}</think>[]`, "\uFEFF[]", `{"\u00`, `[-`, `{"a":-0.5e`,
		"```\n{\n```", `{{{{`, `]]]}}}`, "{\"a\":\"\xff\xfe\"}", `{"a": "x\`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		x, err := ExtractJSONDetailed(reply)
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			_ = je.Error()
			return
		}
		if !json.Valid(x.JSON) {
			t.Fatalf("ExtractJSON(%q) returned invalid JSON %q", reply, x.JSON)
		}
		if c := x.JSON[0]; c != '{' && c != '[' {
			t.Fatalf("ExtractJSON(%q) returned a non-container %q", reply, x.JSON)
		}
		if whole := strings.TrimSpace(reply); json.Valid([]byte(whole)) && (whole[0] == '{' || whole[0] == '[') && string(x.JSON) != whole {
			t.Fatalf("a reply that is itself valid JSON must come back unchanged: %q gave %q", reply, x.JSON)
		}
	})
}
