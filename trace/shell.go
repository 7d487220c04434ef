package trace

import "strings"

// shTok is one token of a shell command line: a word, or an operator
// (&&, ||, ;, |, &, newline, parentheses).
type shTok struct {
	s  string
	op bool
}

// lexShell splits a command line into words and control operators the way
// a POSIX shell would for the purpose of finding the program: quotes are
// removed, escapes resolved, command substitutions kept as opaque words,
// redirections dropped (with their targets), comments and here-document
// bodies skipped. It never fails: an unterminated quote ends at the end of
// the input.
func lexShell(s string) []shTok {
	var (
		toks        []shTok
		word        strings.Builder
		inWord      bool
		skipNext    bool // the next word is a redirection target
		heredocs    []string
		heredocStrp []bool
	)
	emit := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if skipNext {
			skipNext = false
			return
		}
		toks = append(toks, shTok{s: w})
	}
	op := func(o string) {
		emit()
		skipNext = false
		toks = append(toks, shTok{s: o, op: true})
	}
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			emit()
		case c == '\n':
			op("\n")
			if len(heredocs) > 0 {
				// skip here-document bodies up to each delimiter line.
				for k, delim := range heredocs {
					for i+1 < n {
						end := strings.IndexByte(s[i+1:], '\n')
						var line string
						if end < 0 {
							line = s[i+1:]
							i = n - 1
						} else {
							line = s[i+1 : i+1+end]
							i += 1 + end
						}
						if heredocStrp[k] {
							line = strings.TrimLeft(line, "\t")
						}
						if line == delim {
							break
						}
					}
				}
				heredocs, heredocStrp = nil, nil
			}
		case c == '\\':
			if i+1 < n {
				if s[i+1] == '\n' { // line continuation
					i++
					continue
				}
				word.WriteByte(s[i+1])
				inWord = true
				i++
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				word.WriteString(s[i+1:])
				i = n
			} else {
				word.WriteString(s[i+1 : i+1+end])
				i += 1 + end
			}
		case c == '"':
			inWord = true
			j := i + 1
			for ; j < n && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < n && strings.IndexByte("\"\\$`\n", s[j+1]) >= 0 {
					j++
				}
				word.WriteByte(s[j])
			}
			i = j
		case c == '`':
			inWord = true
			end := strings.IndexByte(s[i+1:], '`')
			if end < 0 {
				word.WriteString(s[i:])
				i = n
			} else {
				word.WriteString(s[i : i+2+end])
				i += 1 + end
			}
		case c == '$' && i+1 < n && (s[i+1] == '(' || s[i+1] == '{'):
			inWord = true
			open, close := s[i+1], byte(')')
			if open == '{' {
				close = '}'
			}
			depth := 0
			j := i + 1
			for ; j < n; j++ {
				if s[j] == open {
					depth++
				} else if s[j] == close {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= n {
				j = n - 1
			}
			word.WriteString(s[i : j+1])
			i = j
		case c == '#' && !inWord:
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				i = n
			} else {
				i += end - 1
			}
		case c == '&' || c == '|' || c == ';':
			if c == '&' && i+1 < n && s[i+1] == '>' { // &> and &>> redirect
				emit()
				i++
				if i+1 < n && s[i+1] == '>' {
					i++
				}
				skipNext = true
				continue
			}
			if i+1 < n && s[i+1] == c {
				op(string([]byte{c, c}))
				i++
				continue
			}
			if c == '|' && i+1 < n && s[i+1] == '&' {
				op("|")
				i++
				continue
			}
			op(string(c))
		case c == '(' || c == ')':
			if c == '(' && inWord {
				word.WriteByte(c) // e.g. a glob or an argument such as f(x)
				continue
			}
			op(string(c))
		case c == '<' || c == '>':
			// A word made only of digits right before is a file descriptor.
			if inWord {
				if w := word.String(); w != "" && strings.Trim(w, "0123456789") == "" {
					word.Reset()
					inWord = false
				} else {
					emit()
				}
			}
			j := i + 1
			for j < n && (s[j] == '<' || s[j] == '>' || s[j] == '|') {
				j++
			}
			redir := s[i:j]
			if j < n && s[j] == '&' { // >&2, 2>&1, <&-
				j++
				for j < n && (s[j] >= '0' && s[j] <= '9' || s[j] == '-') {
					j++
				}
				i = j - 1
				continue
			}
			if j < n && s[j] == '(' { // process substitution <(cmd)
				word.WriteString(redir)
				inWord = true
				i = j - 1
				continue
			}
			i = j - 1
			if strings.HasPrefix(redir, "<<") && redir != "<<<" {
				// here-document: read its delimiter now.
				k := j
				strip := false
				if k < n && s[k] == '-' {
					strip = true
					k++
				}
				for k < n && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				start := k
				for k < n && s[k] != ' ' && s[k] != '\t' && s[k] != '\n' && s[k] != ';' && s[k] != '|' && s[k] != '&' && s[k] != ')' {
					k++
				}
				delim := strings.Trim(s[start:k], `'"`)
				delim = strings.ReplaceAll(delim, `\`, "")
				if delim != "" {
					heredocs = append(heredocs, delim)
					heredocStrp = append(heredocStrp, strip)
				}
				i = k - 1
				continue
			}
			skipNext = true
		default:
			inWord = true
			word.WriteByte(c)
		}
	}
	emit()
	return toks
}
