package config

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the property lists in doc.go")

// TestDocListsEveryProperty checks that doc.go lists every property with
// its default, exactly as generated from the definitions tables.
func TestDocListsEveryProperty(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	lines, err = replaceSection(lines, "// # Broker properties", brokerDocLines())
	if err != nil {
		t.Fatal(err)
	}
	lines, err = replaceSection(lines, "// # Topic properties", topicDocLines())
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(lines, "\n")
	if want == string(src) {
		return
	}
	if *update {
		if err := os.WriteFile("doc.go", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("doc.go's property lists are stale: run go test ./config -run TestDocListsEveryProperty -update")
}

// replaceSection puts block after the first paragraph under heading,
// in place of the code block that was there.
func replaceSection(lines []string, heading string, block []string) ([]string, error) {
	h := indexOf(lines, heading)
	if h < 0 {
		return nil, fmt.Errorf("doc.go has no %q", heading)
	}
	p := h + 2 // the paragraph starts after the blank comment line
	for p < len(lines) && lines[p] != "//" && strings.HasPrefix(lines[p], "//") {
		p++
	}
	j := p
	for j < len(lines) && !strings.HasPrefix(lines[j], "// #") && !strings.HasPrefix(lines[j], "package ") {
		j++
	}
	if j == len(lines) {
		return nil, fmt.Errorf("doc.go: nothing follows %q", heading)
	}
	out := append([]string{}, lines[:p]...)
	out = append(out, "//")
	out = append(out, block...)
	if strings.HasPrefix(lines[j], "// #") {
		out = append(out, "//")
	}
	return append(out, lines[j:]...), nil
}

func indexOf(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}

func brokerDocLines() []string {
	var out []string
	for _, name := range brokerIndex().names {
		d := brokerIndex().byName[name]
		val := d.deflt
		if d.null {
			val = "null"
		}
		var notes []string
		if d.kafka != "" {
			notes = append(notes, "Kafka: "+d.kafka)
		}
		if d.varve {
			notes = append(notes, "Varve's own")
		}
		if d.field == nil {
			notes = append(notes, "accepted")
		}
		if d.note != "" {
			notes = append(notes, d.note)
		}
		out = append(out, docLine(name, val, notes))
	}
	return out
}

func topicDocLines() []string {
	var out []string
	for _, name := range topicIndex().names {
		d := topicIndex().byName[name]
		from := "from " + d.synonym
		if d.synonym == "" {
			from = "default " + d.fixed
			if d.fixed == "" {
				from = "default empty"
			}
		}
		var notes []string
		if d.field == nil {
			notes = append(notes, "accepted")
		}
		if d.note != "" {
			notes = append(notes, d.note)
		}
		out = append(out, docLine(name, from, notes))
	}
	return out
}

func docLine(name, val string, notes []string) string {
	if val == "" {
		val = `""`
	}
	s := fmt.Sprintf("//\t%-48s %s", name, val)
	if len(notes) > 0 {
		s = fmt.Sprintf("%-80s (%s)", s, strings.Join(notes, "; "))
	}
	return strings.TrimRight(s, " ")
}
