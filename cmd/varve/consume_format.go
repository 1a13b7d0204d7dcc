package main

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordFormat prints records as kcat's -f does. Tokens:
//
//	%t topic      %p partition   %o offset     %T timestamp (ms)
//	%k key        %K key length  %v or %s value  %S value length
//	%h headers as k=v, comma separated           %% a '%'
//
// and the escapes \n \r \t \\. Lengths of a null key or value are -1, as
// in kcat. Nothing is added: end the format with \n for one line per
// record. The format is parsed once; printing does not allocate.
type recordFormat []formatPart

// formatPart is literal text (verb 0) or one verb.
type formatPart struct {
	verb byte
	text []byte
}

// defaultFormat prints the value and a newline, kcat's default.
const defaultFormat = `%v\n`

// parseRecordFormat parses a kcat-style format.
func parseRecordFormat(s string) (recordFormat, error) {
	var f recordFormat
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			f = append(f, formatPart{text: lit})
			lit = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c != '%' && c != '\\') || i+1 == len(s) {
			lit = append(lit, c)
			continue
		}
		i++
		if c == '\\' {
			lit = append(lit, unescape(s[i]))
			continue
		}
		switch s[i] {
		case '%':
			lit = append(lit, '%')
		case 't', 'p', 'o', 'T', 'k', 'K', 'v', 's', 'S', 'h':
			flush()
			f = append(f, formatPart{verb: s[i]})
		default:
			return nil, fmt.Errorf("--format %q: unknown verb %%%c: %w", s, s[i], errUsage)
		}
	}
	flush()
	return f, nil
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c
}

// appendRecord appends r formatted by f to b.
func (f recordFormat) appendRecord(b []byte, r *kgo.Record) []byte {
	for _, p := range f {
		switch p.verb {
		case 0:
			b = append(b, p.text...)
		case 't':
			b = append(b, r.Topic...)
		case 'p':
			b = strconv.AppendInt(b, int64(r.Partition), 10)
		case 'o':
			b = strconv.AppendInt(b, r.Offset, 10)
		case 'T':
			b = strconv.AppendInt(b, r.Timestamp.UnixMilli(), 10)
		case 'k':
			b = append(b, r.Key...)
		case 'K':
			b = strconv.AppendInt(b, nullableLen(r.Key), 10)
		case 'v', 's':
			b = append(b, r.Value...)
		case 'S':
			b = strconv.AppendInt(b, nullableLen(r.Value), 10)
		case 'h':
			b = appendHeaders(b, r.Headers)
		}
	}
	return b
}

func nullableLen(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

func appendHeaders(b []byte, hs []kgo.RecordHeader) []byte {
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, h.Key...)
		b = append(b, '=')
		b = append(b, h.Value...)
	}
	return b
}
