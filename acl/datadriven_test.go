package acl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScripts replays the scripts under testdata/. Commands:
//
//	config [super=P;P] [allow-if-no-acl]   a new authorizer, no ACLs
//	add        one ACL a line: type pattern name principal host operation permission
//	authorize  one request a line: principal host operation type name;
//	           prints allowed or denied for each
//	match      one filter: type pattern name|- principal|- host|- operation permission
//	           (- is any); prints the ACLs it selects
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		a := NewAuthorizer(Config{})
		var acls []Entry
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "config":
				var cfg Config
				for _, arg := range d.CmdArgs {
					switch arg.Key {
					case "super":
						cfg.SuperUsers = ParseSuperUsers(arg.Vals[0])
					case "allow-if-no-acl":
						cfg.AllowEveryoneIfNoACL = true
					}
				}
				a, acls = NewAuthorizer(cfg), nil
				return ""
			case "add":
				for _, line := range lines(d.Input) {
					b, err := parseBinding(line)
					if err != nil {
						d.Fatalf(t, "%s: %v", line, err)
					}
					acls = append(acls, Entry{Binding: b})
				}
				a.Store(NewSnapshot(acls))
				return fmt.Sprintf("%d ACLs\n", a.Snapshot().Len())
			case "authorize":
				var out strings.Builder
				for _, line := range lines(d.Input) {
					f := strings.Fields(line)
					if len(f) != 5 {
						d.Fatalf(t, "%s: want principal host operation type name", line)
					}
					op, _ := ParseOperation(f[2])
					rt, _ := ParseResourceType(f[3])
					verdict := "denied"
					if a.Authorize(f[0], f[1], op, rt, f[4]) {
						verdict = "allowed"
					}
					fmt.Fprintf(&out, "%s: %s\n", line, verdict)
				}
				return out.String()
			case "match":
				f, err := parseFilter(strings.TrimSpace(d.Input))
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				var out strings.Builder
				for _, e := range a.Snapshot().Match(f) {
					fmt.Fprintln(&out, e.Binding)
				}
				return out.String()
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

func parseBinding(line string) (Binding, error) {
	f := strings.Fields(line)
	if len(f) != 7 {
		return Binding{}, fmt.Errorf("want 7 fields, got %d", len(f))
	}
	rt, ok1 := ParseResourceType(f[0])
	pt, ok2 := ParsePatternType(f[1])
	op, ok3 := ParseOperation(f[5])
	perm, ok4 := ParsePermission(f[6])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Binding{}, fmt.Errorf("unknown name in %q", line)
	}
	b := Binding{ResourceType: rt, PatternType: pt, ResourceName: f[2], Principal: f[3], Host: f[4], Operation: op, Permission: perm}
	return b, b.Validate()
}

func parseFilter(line string) (Filter, error) {
	f := strings.Fields(line)
	if len(f) != 7 {
		return Filter{}, fmt.Errorf("want 7 fields, got %d", len(f))
	}
	opt := func(s string) *string {
		if s == "-" {
			return nil
		}
		return &s
	}
	rt, _ := ParseResourceType(f[0])
	pt, _ := ParsePatternType(f[1])
	op, _ := ParseOperation(f[5])
	perm, _ := ParsePermission(f[6])
	flt := Filter{ResourceType: rt, PatternType: pt, ResourceName: opt(f[2]), Principal: opt(f[3]), Host: opt(f[4]), Operation: op, Permission: perm}
	return flt, flt.Validate()
}
