package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Java: java.util.Properties.load, the syntax of Kafka's server.properties.
func TestReadProperties(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"separators", "a=1\nb:2\nc 3\nd = 4\ne : 5\nf\t=\t6\ng   7", map[string]string{
			"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7"}},
		{"comments and blank lines", "# c1\n! c2\n   # indented\n\n  \t\nk=v", map[string]string{"k": "v"}},
		{"hash inside a value is kept", "k=a#b", map[string]string{"k": "a#b"}},
		{"key without value", "alone\nempty=", map[string]string{"alone": "", "empty": ""}},
		{"continuation drops leading blanks", "k=a,\\\n    b,\\\n\tc", map[string]string{"k": "a,b,c"}},
		{"even backslashes do not continue", "k=a\\\\\nl=b", map[string]string{"k": `a\`, "l": "b"}},
		{"comment line never continues", "# c \\\nk=v", map[string]string{"k": "v"}},
		{"continued line starting with # is value", "k=a\\\n#b", map[string]string{"k": "a#b"}},
		{"backslash at end of input", "k=v\\", map[string]string{"k": "v"}},
		{"escapes", `k=\t\n\r\f\\\=\:\ x`, map[string]string{"k": "\t\n\r\f\\=: x"}},
		{"escaped separators in key", `a\=b=c` + "\n" + `x\ y=z` + "\n" + `p\:q:r`, map[string]string{"a=b": "c", "x y": "z", "p:q": "r"}},
		{"unicode escapes", `k=caf\u00e9 \u4e2d`, map[string]string{"k": "café 中"}},
		{"surrogate pair", `k=\uD83D\uDE00`, map[string]string{"k": "😀"}},
		{"utf-8 text", "k=café # not a comment", map[string]string{"k": "café # not a comment"}},
		{"trailing blanks trimmed, escaped kept", "a=x  \t\nb=y\\ ", map[string]string{"a": "x", "b": "y "}},
		{"CRLF and CR", "a=1\r\nb=2\rc=3\r\n", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"later duplicate wins", "k=1\nk=2", map[string]string{"k": "2"}},
		{"second separator is value", "k==v\nl: :v", map[string]string{"k": "=v", "l": ":v"}},
		{"unknown escape keeps char", `k=\q\z`, map[string]string{"k": "qz"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadProperties(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestReadPropertiesErrors(t *testing.T) {
	cases := []struct{ in, wantLine string }{
		{"a=1\nk=\\u12", "line 2"},
		{"a=1\n\nk=\\uZZZZ", "line 3"},
		{"k=x\\\ny\\\n\\u1", "line 1"},
	}
	for _, c := range cases {
		_, err := ReadProperties(strings.NewReader(c.in))
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), c.wantLine) {
			t.Errorf("ReadProperties(%q) = %v, want ErrSyntax at %s", c.in, err, c.wantLine)
		}
	}
	if _, err := ReadProperties(strings.NewReader("k=\xff")); !errors.Is(err, ErrSyntax) {
		t.Errorf("invalid UTF-8: %v, want ErrSyntax", err)
	}
	big := strings.NewReader(strings.Repeat("#", maxPropertiesBytes+1))
	if _, err := ReadProperties(big); !errors.Is(err, ErrSyntax) {
		t.Errorf("oversized input: %v, want ErrSyntax", err)
	}
}

func FuzzReadProperties(f *testing.F) {
	for _, s := range []string{"a=b", "k=\\u00e9\\\n  x", "# c\n!d\n k : v ", `\uD83D\uDE00=\t`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		props, err := ReadProperties(strings.NewReader(s))
		if err != nil {
			return
		}
		for k, v := range props {
			// Java keeps a blank that a backslash escapes, written as
			// \t, \f, \uXXXX or a backslash before the blank itself.
			escaped := strings.Contains(s, `\ `) || strings.Contains(s, "\\\t") || strings.Contains(s, "\\\f") ||
				strings.Contains(s, `\t`) || strings.Contains(s, `\f`) || strings.Contains(s, `\u`)
			if strings.TrimRight(v, " \t\f") != v && !escaped {
				t.Errorf("value of %q keeps trailing blanks: %q", k, v)
			}
		}
	})
}
