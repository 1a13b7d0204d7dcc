package cluster

import (
	"errors"
	"fmt"
	"strings"
)

// jaasEntry is one login module of a JAAS configuration as Kafka's
// sasl.jaas.config property holds it:
//
//	<login module class> <flag> [<name>=<value> ...];
//
// where the flag is required, requisite, sufficient or optional and a
// value is a bare word or a double-quoted string (\" and \\ escaped).
type jaasEntry struct {
	module  string
	options map[string]string
}

// parseJAAS reads a sasl.jaas.config value holding one login module.
// Errors never quote option values: they hold passwords.
func parseJAAS(s string) (jaasEntry, error) {
	p := &jaasParser{s: strings.TrimSpace(s)}
	e := jaasEntry{module: p.word(), options: map[string]string{}}
	if e.module == "" {
		return e, errors.New("expected a login module class first")
	}
	switch flag := p.word(); flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return e, fmt.Errorf("expected a control flag (required, requisite, sufficient or optional) after %s", e.module)
	}
	for {
		p.space()
		if p.eat(';') {
			break
		}
		name := p.word()
		if name == "" || !p.eat('=') {
			return e, fmt.Errorf("expected name=value options ending with ';' (at byte %d)", p.i)
		}
		v, err := p.value()
		if err != nil {
			return e, fmt.Errorf("option %s: %w", name, err)
		}
		if _, dup := e.options[name]; dup {
			return e, fmt.Errorf("option %s given twice", name)
		}
		e.options[name] = v
	}
	if p.space(); p.i != len(p.s) {
		return e, errors.New("expected one login module: text follows its ';'")
	}
	return e, nil
}

type jaasParser struct {
	s string
	i int
}

func (p *jaasParser) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *jaasParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// word reads a run of characters up to white space, '=', ';' or '"'.
func (p *jaasParser) word() string {
	p.space()
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(" \t\r\n=;\"", rune(p.s[p.i])) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *jaasParser) value() (string, error) {
	if !p.eat('"') {
		if w := p.word(); w != "" {
			return w, nil
		}
		return "", errors.New("expected a value")
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String(), nil
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unterminated quoted value")
}

// jaasUsers returns the user_<name>="<password>" options of a login
// module: Kafka's PlainLoginModule's users, and Varve's SCRAM users
// (Kafka keeps those in the cluster metadata).
func (e jaasEntry) users() map[string]string {
	out := map[string]string{}
	for k, v := range e.options {
		if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
			out[name] = v
		}
	}
	return out
}
