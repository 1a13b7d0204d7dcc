package config

import (
	"errors"
	"sort"
	"strings"
)

// def is one broker property: its Kafka name, type, default and range,
// and where its value lives. The tables in broker_defs.go and
// topic_defs.go are the only place a property is described; parsing,
// Get, Names, the documentation in doc.go and the tests all read them.
type def struct {
	name string
	typ  *valueType
	// deflt is the default as DescribeConfigs shows it. When null is
	// set, Kafka's default is null: the property is either derived from
	// others when unset (derived) or simply absent.
	deflt   string
	null    bool
	derived bool
	// kafka is Kafka's default where Varve's differs (see doc.go); empty
	// when they agree.
	kafka string
	check check
	// field returns a pointer to the Broker field that holds the value;
	// nil for a property Varve accepts and validates but does not use,
	// whose value is kept for Get.
	field func(b *Broker) any
	// varve marks Varve's own properties (prefix varve.).
	varve bool
	// listener marks a property a listener may override with Kafka's
	// prefix listener.name.<lower-case listener name>. (security.go).
	listener bool
	note     string
}

// value parses raw (already trimmed) and range-checks it.
func (d *def) value(raw string) (any, error) {
	return parseChecked(d.name, raw, d.typ, d.check)
}

func parseChecked(name, raw string, t *valueType, c check) (any, error) {
	v, err := t.parse(raw)
	if err == nil && c != nil {
		err = c(v)
	}
	if err != nil {
		pe := invalid(name, raw, "%s", err.Error())
		if errors.Is(err, ErrUnsupported) {
			pe.Err = ErrUnsupported
		}
		return nil, pe
	}
	return v, nil
}

// index maps each name of a table to its entry; names lists them sorted.
type index[D any] struct {
	byName map[string]*D
	names  []string
}

func newIndex[D any](defs []D, name func(*D) string) index[D] {
	ix := index[D]{byName: make(map[string]*D, len(defs))}
	for i := range defs {
		n := name(&defs[i])
		ix.byName[n] = &defs[i]
		ix.names = append(ix.names, n)
	}
	sort.Strings(ix.names)
	return ix
}

// trimmed returns props with surrounding white space removed from every
// value, as Kafka's ConfigDef trims before parsing.
func trimmed(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = strings.TrimSpace(v)
	}
	return out
}
