package app

// MaxQueryLen bounds a search string (patterns, errors, skills,
// heuristics). Longer ones are refused with an invalid-input error rather
// than handed to the full-text index, whose query parser fails on them.
const MaxQueryLen = 1024

// CheckQuery checks an optional search or filter string: at most
// MaxQueryLen bytes of valid UTF-8 without control characters.
func CheckQuery(op, field, s string) error {
	if s == "" {
		return nil
	}
	return ValidText(op, field, s, MaxQueryLen, false)
}
