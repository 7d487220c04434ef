package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/app"
)

type decodeTarget struct {
	Name  string         `json:"name"`
	N     int            `json:"n"`
	Inner map[string]any `json:"inner"`
	List  []any          `json:"list"`
}

// Finding 4 of issue 12: null bodies were taken as {}, duplicate keys
// accepted, invalid UTF-8 replaced silently.
func TestDecodeJSONStrict(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", app.MaxJSONDepth+1) + strings.Repeat("]", app.MaxJSONDepth+1)
	for name, in := range map[string]string{
		"empty":             "",
		"blank":             " \n",
		"null":              "null",
		"null spaced":       " null\n",
		"duplicate":         `{"name":"a","name":"b"}`,
		"duplicate nested":  `{"inner":{"k":1,"k":2}}`,
		"duplicate in list": `{"list":[{"a":1,"a":1}]}`,
		"invalid utf8":      "{\"name\":\"\xff\xfe\"}",
		"latin1":            "{\"name\":\"caf\xe9\"}",
		"unknown field":     `{"nope":1}`,
		"trailing":          `{"name":"a"} {}`,
		"trailing garbage":  `{"name":"a"}x`,
		"array":             `[1,2]`,
		"string":            `"x"`,
		"truncated":         `{"name":`,
		"too deep":          `{"list":` + deep + `}`,
		"nul byte":          "{\"name\":\"a\"}\x00",
	} {
		var v decodeTarget
		err := app.DecodeJSON([]byte(in), &v, "test")
		var ae *app.Error
		if !errors.As(err, &ae) || ae.Kind != app.KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, in := range map[string]string{
		"object":          `{"name":"a","n":1}`,
		"same key nested": `{"name":"a","inner":{"name":"b","x":{"name":"c"}},"list":[{"k":1},{"k":2}]}`,
		"empty object":    `{}`,
		"utf8":            `{"name":"日本語 ⼀ \u2e9e"}`,
		"depth ok":        `{"list":` + strings.Repeat("[", app.MaxJSONDepth-2) + strings.Repeat("]", app.MaxJSONDepth-2) + `}`,
		"spaces around":   "  {\"name\":\"a\"}\n",
	} {
		var v decodeTarget
		if err := app.DecodeJSON([]byte(in), &v, "test"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `null`, `{"a":1,"a":2}`, `[[[]]]`, "{\"name\":\"\xff\"}", `{"inner":{"x":[{}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v decodeTarget
		err := app.DecodeJSON(data, &v, "fuzz")
		if err != nil {
			var ae *app.Error
			if !errors.As(err, &ae) {
				t.Fatalf("untyped error %T %v", err, err)
			}
		}
	})
}
