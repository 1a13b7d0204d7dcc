package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PrincipalRules is ssl.principal.mapping.rules parsed: Kafka's
// SslPrincipalMapper, which turns a TLS client certificate's subject
// (its RFC 2253 distinguished name) into the name of its principal.
// The rules are tried in order; the first that matches gives the name:
//
//	DEFAULT                         the distinguished name unchanged
//	RULE:pattern/replacement/[L|U]  when pattern matches the whole name,
//	                                every match of it is replaced by
//	                                replacement ($1 its first group, \$
//	                                a dollar sign), then lower-cased (L)
//	                                or upper-cased (U)
//
// separated by commas or new lines, white space around them ignored. A
// '/' or '\' in a pattern or replacement is escaped with '\'. When no
// rule matches, the client is not authenticated.
//
// Patterns are Go regular expressions (RE2), which read Java's common
// syntax alike but have no look-around or back-references. A
// PrincipalRules is immutable and safe for concurrent use.
type PrincipalRules struct {
	rules []principalRule
}

type principalRule struct {
	isDefault   bool
	re          *regexp.Regexp // as written, for the replacement
	whole       *regexp.Regexp // anchored at both ends, for the match
	replacement []replPart
	lower       bool
	upper       bool
}

// replPart is a literal or a group reference of a replacement.
type replPart struct {
	literal string
	group   int // -1 for a literal
}

// ErrNoPrincipalRule is Map's error when no rule matches.
var ErrNoPrincipalRule = errors.New("no ssl.principal.mapping.rules rule applies")

// ParsePrincipalRules parses ssl.principal.mapping.rules.
func ParsePrincipalRules(s string) (*PrincipalRules, error) {
	p := &PrincipalRules{}
	for i := 0; ; {
		i = skipSpace(s, i)
		if i == len(s) {
			break
		}
		r, next, err := parsePrincipalRule(s, i)
		if err != nil {
			return nil, err
		}
		i = skipSpace(s, next)
		switch {
		case i == len(s):
		case s[i] == ',' || s[i] == '\n':
			i++
		default:
			return nil, fmt.Errorf("invalid rule at %q: expected ',' or a new line after a rule", s[i:])
		}
		if r != nil {
			p.rules = append(p.rules, *r)
		}
	}
	if len(p.rules) == 0 {
		return nil, errors.New("no rule: give DEFAULT or RULE:pattern/replacement/[LU]")
	}
	return p, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// parsePrincipalRule parses the rule at s[i:]; a nil rule is an empty one.
func parsePrincipalRule(s string, i int) (*principalRule, int, error) {
	rest := s[i:]
	switch {
	case rest[0] == ',' || rest[0] == '\n':
		return nil, i, nil // an empty rule, ignored as Kafka does
	case strings.HasPrefix(rest, "DEFAULT"):
		return &principalRule{isDefault: true}, i + len("DEFAULT"), nil
	case !strings.HasPrefix(rest, "RULE:"):
		return nil, i, fmt.Errorf("invalid rule at %q: expected DEFAULT or RULE:pattern/replacement/[LU]", rest)
	}
	j := i + len("RULE:")
	pattern, j, ok := cutEscaped(s, j)
	if !ok {
		return nil, i, fmt.Errorf("invalid rule %q: expected RULE:pattern/replacement/[LU]", rest)
	}
	repl, j, ok := cutEscaped(s, j)
	if !ok {
		return nil, i, fmt.Errorf("invalid rule %q: expected RULE:pattern/replacement/[LU]", rest)
	}
	r := &principalRule{}
	if j < len(s) && (s[j] == 'L' || s[j] == 'U') {
		r.lower, r.upper = s[j] == 'L', s[j] == 'U'
		j++
	}
	var err error
	if r.re, err = regexp.Compile(pattern); err != nil {
		return nil, i, fmt.Errorf("rule %q: %w", rest, err)
	}
	r.whole = regexp.MustCompile(`^(?:` + pattern + `)$`)
	if r.replacement, err = parseReplacement(repl, r.re); err != nil {
		return nil, i, fmt.Errorf("rule %q: %w", rest, err)
	}
	return r, j, nil
}

// cutEscaped reads s[i:] up to an unescaped '/', which it consumes,
// keeping escapes as written (the pattern's are the regular
// expression's; the replacement's are read by parseReplacement).
func cutEscaped(s string, i int) (string, int, bool) {
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '/':
			return s[i:j], j + 1, true
		}
	}
	return "", i, false
}

// parseReplacement reads a replacement as Java's Matcher.replaceAll
// does, after Kafka's escapeLiteralBackReferences: "\c" is c, "$n" is
// group n (taking further digits while they name a group), "${name}" a
// named group, and a "$n" naming no group is literal text.
func parseReplacement(s string, re *regexp.Regexp) ([]replPart, error) {
	var out []replPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, replPart{literal: lit.String(), group: -1})
			lit.Reset()
		}
	}
	groups := re.NumSubexp()
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			lit.WriteByte(s[i])
		case c == '\\':
			return nil, errors.New("replacement ends with a lone '\\'")
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, errors.New("replacement: unterminated ${name}")
			}
			g := re.SubexpIndex(s[i+2 : i+end])
			if g < 0 {
				return nil, fmt.Errorf("replacement: no group named %q", s[i+2:i+end])
			}
			flush()
			out = append(out, replPart{group: g})
			i += end
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			g, n := groupRef(s[i+1:], groups)
			if g < 0 {
				lit.WriteByte('$') // Kafka escapes a reference to no group
				continue
			}
			flush()
			out = append(out, replPart{group: g})
			i += n
		case c == '$':
			return nil, errors.New("replacement: '$' must name a group ($1, ${name}); write \\$ for a dollar sign")
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

// groupRef reads the group number at the start of s, as Java does: the
// first digit, then each further digit while the number still names a
// group. It returns -1 when the first digit names none (n is then 0).
func groupRef(s string, groups int) (g, n int) {
	g = int(s[0] - '0')
	if g > groups {
		return -1, 0
	}
	n = 1
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		next, _ := strconv.Atoi(s[:n+1])
		if next > groups {
			break
		}
		g, n = next, n+1
	}
	return g, n
}

// Map returns the principal name of the distinguished name dn: the
// first matching rule's result, or ErrNoPrincipalRule.
func (p *PrincipalRules) Map(dn string) (string, error) {
	for _, r := range p.rules {
		if r.isDefault {
			return dn, nil
		}
		if !r.whole.MatchString(dn) {
			continue
		}
		out := r.replaceAll(dn)
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("%w to %q", ErrNoPrincipalRule, dn)
}

// replaceAll replaces every match of the rule's pattern in dn, as
// Java's String.replaceAll.
func (r *principalRule) replaceAll(dn string) string {
	var b strings.Builder
	last := 0
	for _, m := range r.re.FindAllStringSubmatchIndex(dn, -1) {
		b.WriteString(dn[last:m[0]])
		for _, part := range r.replacement {
			if part.group < 0 {
				b.WriteString(part.literal)
			} else if m[2*part.group] >= 0 {
				b.WriteString(dn[m[2*part.group]:m[2*part.group+1]])
			}
		}
		last = m[1]
	}
	b.WriteString(dn[last:])
	return b.String()
}

// IsDefault reports whether the rules are DEFAULT alone.
func (p *PrincipalRules) IsDefault() bool {
	return len(p.rules) == 1 && p.rules[0].isDefault
}

// checkPrincipalRules validates ssl.principal.mapping.rules.
func checkPrincipalRules(v any) error {
	_, err := ParsePrincipalRules(v.(string))
	return err
}
