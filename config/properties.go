package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxPropertiesBytes bounds what ReadProperties reads: a server.properties
// is a few KiB, and a runaway input must not take all memory.
const maxPropertiesBytes = 4 << 20

// ReadProperties parses Java .properties text, as Kafka reads
// server.properties (java.util.Properties.load):
//
//   - A natural line ends at \n, \r\n or \r. A line ending in an odd
//     number of backslashes continues on the next, whose leading white
//     space is dropped. A comment line (first non-blank character # or !)
//     never continues.
//   - Blank and comment lines are skipped.
//   - The key ends at the first unescaped '=', ':' or white space
//     (space, tab, form feed); white space around the separator is
//     dropped, and one '=' or ':' after white space is part of the
//     separator: "key value", "key=value", "key : value" are the same.
//   - In keys and values, \t \n \r \f are control characters, \uXXXX is
//     a UTF-16 code unit (surrogate pairs combine), and a backslash before
//     any other character keeps that character ("\=", "\:", "\ ", "\\").
//   - A later duplicate key replaces an earlier one.
//
// Two differences from Java: the text is read as UTF-8 (Java's load from
// a stream reads ISO-8859-1), and unescaped trailing white space is
// trimmed from values (Kafka's ConfigDef trims values before parsing, so
// this changes nothing Kafka would accept). A malformed \u escape is an
// error wrapping ErrSyntax with its line number.
func ReadProperties(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPropertiesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read properties: %w", err)
	}
	if len(data) > maxPropertiesBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrSyntax, maxPropertiesBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8 text", ErrSyntax)
	}
	props := map[string]string{}
	lines := naturalLines(string(data))
	for i := 0; i < len(lines); {
		lineNo := i + 1
		logical, next := logicalLine(lines, i)
		i = next
		if logical == "" {
			continue
		}
		key, value, err := keyValue(logical)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrSyntax, lineNo, err)
		}
		props[key] = value
	}
	return props, nil
}

// naturalLines splits s at \n, \r\n and \r.
func naturalLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

// logicalLine joins lines[i] with its continuation lines. It returns ""
// for a blank or comment line, and the index of the next unread line.
func logicalLine(lines []string, i int) (string, int) {
	line := trimLeft(lines[i])
	i++
	if line == "" || line[0] == '#' || line[0] == '!' {
		return "", i
	}
	for continues(line) {
		line = line[:len(line)-1]
		if i == len(lines) {
			break
		}
		line += trimLeft(lines[i])
		i++
	}
	return line, i
}

// continues reports whether line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for j := len(line) - 1; j >= 0 && line[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeft(s string) string {
	j := 0
	for j < len(s) && isBlank(s[j]) {
		j++
	}
	return s[j:]
}

// keyValue splits a logical line into its unescaped key and value.
func keyValue(line string) (string, string, error) {
	end := 0
	for end < len(line) {
		c := line[end]
		if c == '\\' {
			end += 2
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			break
		}
		end++
	}
	end = min(end, len(line))
	rest := trimLeft(line[end:])
	if end < len(line) && isBlank(line[end]) && rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeft(rest[1:])
	} else if end < len(line) && (line[end] == '=' || line[end] == ':') {
		rest = trimLeft(line[end+1:])
	}
	key, err := unescape(line[:end], false)
	if err != nil {
		return "", "", err
	}
	value, err := unescape(rest, true)
	return key, value, err
}

// unescape resolves backslash escapes; with trimRight it drops trailing
// white space that was not escaped.
func unescape(s string, trimRight bool) (string, error) {
	var b strings.Builder
	keep := 0 // length of b up to the last escaped or non-blank character
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			if !isBlank(c) {
				keep = b.Len()
			}
			continue
		}
		i++
		if i == len(s) {
			break
		}
		n, err := writeEscape(&b, s, i)
		if err != nil {
			return "", err
		}
		i += n
		keep = b.Len()
	}
	out := b.String()
	if trimRight {
		out = out[:keep]
	}
	return out, nil
}

// writeEscape writes the escape whose letter is s[i] and returns how many
// bytes after the letter it consumed.
func writeEscape(b *strings.Builder, s string, i int) (int, error) {
	switch s[i] {
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 'f':
		b.WriteByte('\f')
	case 'u':
		return writeUnicode(b, s, i)
	default:
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		return size - 1, nil
	}
	return 0, nil
}

// writeUnicode decodes \uXXXX at s[i] ('u'), combining a surrogate pair
// written as two escapes.
func writeUnicode(b *strings.Builder, s string, i int) (int, error) {
	r, err := hex4(s, i+1)
	if err != nil {
		return 0, err
	}
	if utf16.IsSurrogate(r) && i+10 < len(s) && s[i+5] == '\\' && s[i+6] == 'u' {
		if lo, err := hex4(s, i+7); err == nil {
			if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
				b.WriteRune(pair)
				return 10, nil
			}
		}
	}
	b.WriteRune(r)
	return 4, nil
}

func hex4(s string, at int) (rune, error) {
	if at+4 > len(s) {
		return 0, fmt.Errorf("malformed \\uxxxx escape %q", s[at-2:])
	}
	n, err := strconv.ParseUint(s[at:at+4], 16, 16)
	if err != nil {
		return 0, fmt.Errorf("malformed \\uxxxx escape %q", s[at-2:at+4])
	}
	return rune(n), nil
}
