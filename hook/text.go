package hook

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Size limits of what a hook stores and injects.
const (
	// MaxPayloadBytes bounds the hook JSON read from stdin.
	MaxPayloadBytes = 4 << 20
	// maxStoredText bounds a prompt or error message stored with a task.
	maxStoredText = 4 << 10
	// maxGuidanceTask bounds the prompt text searched for anti-patterns.
	maxGuidanceTask = 32 << 10
	// maxInjected bounds the context injected into the agent.
	maxInjected = 8 << 10
	maxIDBytes  = 200
)

// cleanText makes agent text storable: valid UTF-8, control characters
// other than newline and tab replaced by spaces, at most limit bytes (cut
// at a character boundary, marked with an ellipsis).
func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r == '\r' || r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	return truncate(s, limit)
}

// oneLine makes an identifier: one line, no surrounding spaces, inner
// whitespace and control characters replaced by '_', at most limit bytes.
func oneLine(s string, limit int) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, s)
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// truncate cuts s to at most limit bytes at a character boundary, ending
// with "…" when it cut.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
