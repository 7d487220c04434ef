package tokenize

import "unicode"

// FoldWidth maps full-width ASCII forms (Ａ, ０, ．) and the ideographic
// space to ASCII, so "ｃｏｎｆｉｇ" and "config" meet.
func FoldWidth(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r == 0x3000:
		return ' '
	}
	return r
}

// IsCJK reports letters of scripts written without spaces between words:
// Han ideographs, Hiragana, Katakana and Hangul. Symbols of those scripts
// (Kangxi and CJK radicals, iteration and prolonged-sound marks that are
// not letters) are not: they separate words like punctuation.
func IsCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0x3040 && r <= 0x30FF,
		r >= 0xAC00 && r <= 0xD7AF, r >= 0xF900 && r <= 0xFAFF, r >= 0x20000 && r <= 0x3134F:
		return unicode.IsLetter(r)
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) && unicode.IsLetter(r)
}
