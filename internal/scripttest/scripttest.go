package scripttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Commands is a script language: each command's name and what runs it
// on the script S.
type Commands[S any] map[string]func(S, *testing.T, *datadriven.TestData)

// Dispatch runs td's command on s and returns what it printed: the lines
// in *out (reset first), or "ok" if none. An unknown command, or one
// before "new" (started false), fails the test.
func Dispatch[S any](t *testing.T, td *datadriven.TestData, s S, cmds Commands[S], started bool, out *[]string) string {
	cmd, ok := cmds[td.Cmd]
	if !ok {
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
	if !started && td.Cmd != "new" {
		td.Fatalf(t, "%s before new", td.Cmd)
	}
	*out = nil
	cmd(s, t, td)
	if len(*out) == 0 {
		return "ok\n"
	}
	return strings.Join(*out, "\n") + "\n"
}

// DurArg is the duration argument key (Go's syntax: 10s, 1h), def if
// absent.
func DurArg(t *testing.T, td *datadriven.TestData, key string, def time.Duration) time.Duration {
	var s string
	if !td.MaybeScanArgs(t, key, &s) {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s: %v", key, err)
	}
	return d
}

// CodeName is a Kafka error code's name, "ok" for none.
func CodeName(code int16) string {
	if code == 0 {
		return "ok"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprintf("code %d", code)
}

// Since prints at as an offset from a script's clock origin: "+1.5s".
func Since(origin, at time.Time) string { return "+" + at.Sub(origin).String() }
