package segment_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/varve/varve/segment"
)

const rlimitChildEnv = "VARVE_RLIMIT_CHILD"

// The start-up check raises the soft limit to the hard one; with a hard
// limit of 2,000, 5,000 partitions do not fit and one error line says
// what to raise and to what, and a creation past the limit is refused
// whole (the issue: creations failed midway with "too many open files").
func TestFileLimitChecks(t *testing.T) {
	if os.Getenv(rlimitChildEnv) != "" {
		rlimitChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileLimitChecks$", "-test.v")
	cmd.Env = append(os.Environ(), rlimitChildEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func rlimitChild(t *testing.T) {
	lim := syscall.Rlimit{Cur: 1500, Max: 2000}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower the limit: %v", err)
	}
	files := segment.NewFileCache(100)
	var logs bytes.Buffer
	segment.CheckFileLimit(5000, files, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur != 2000 {
		t.Fatalf("soft limit %d after the check, want the hard limit 2000 (%v)", lim.Cur, err)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "raise_to=6124") {
		t.Fatalf("want one error line naming the limit to raise to:\n%s", logs.String())
	}
	if err := segment.CheckCanCreate(100, 700, files); err != nil {
		t.Fatalf("800 partitions fit in 2000 descriptors: %v", err)
	}
	err := segment.CheckCanCreate(100, 900, files)
	if !errors.Is(err, segment.ErrTooManyOpenFiles) || !strings.Contains(err.Error(), "2124") {
		t.Fatalf("1000 partitions need 2124 descriptors, got %v", err)
	}
}
