package model

import (
	"fmt"
	"log/slog"
	"strings"
)

// redacted is what a non-empty [Secret] prints as.
const redacted = "[REDACTED]"

// Secret holds an API key. It formats, logs and marshals as "[REDACTED]"
// (or "" when empty) under every fmt verb, in slog records and in JSON or
// TOML output, so a key cannot leak through a printed config or an error.
// Use [Secret.Reveal] only to put the key on the wire.
type Secret string

// Reveal returns the key itself.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

// String returns "[REDACTED]" for a non-empty secret and "" otherwise.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString is the %#v form: the redacted text, quoted.
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.String()) }

// Format implements [fmt.Formatter] so that every verb (%v, %s, %q, %x,
// %d, …) prints the redacted form, never the key.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		verb = 'q'
	}
	formatRedacted(f, verb, s.String())
}

// LogValue implements [slog.LogValuer].
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText implements [encoding.TextMarshaler] with the redacted form,
// so JSON and TOML encodings of a config never contain the key.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements [encoding.TextUnmarshaler]. The redaction marker
// itself decodes to an empty secret, so a config printed and read back does
// not send "[REDACTED]" as a key.
func (s *Secret) UnmarshalText(b []byte) error {
	v := strings.TrimSpace(string(b))
	if v == redacted {
		v = ""
	}
	*s = Secret(v)
	return nil
}

// scrub replaces every occurrence of the secret in text. It is the last line
// of defence for text that came from elsewhere (a provider's error body that
// echoes the Authorization header, a transport error naming a URL).
func (s Secret) scrub(text string) string {
	if len(s) < 4 { // too short to be a key; replacing would garble text
		return text
	}
	return strings.ReplaceAll(text, string(s), redacted)
}
