package cluster_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/varve/varve/record"
)

// kcatPath finds kcat (Debian's package, librdkafka 2.0). Without it the
// test skips on a developer machine and fails under CI, which installs it.
func kcatPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"kcat", "kafkacat"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("kcat is not installed (apt-get install kcat); CI must have it")
	}
	t.Skip("kcat is not installed (apt-get install kcat)")
	return ""
}

func runKcat(t *testing.T, kcat string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(kcat, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// kcat, as a user would run it: produce keyed lines with headers, with
// each compression codec, and consume them back.
func TestKcatProduceConsume(t *testing.T) {
	kcat := kcatPath(t)
	b := startBroker(t, t.TempDir(), nil)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "kcat-" + codec
			var in bytes.Buffer
			var want []string
			for i := 0; i < 100; i++ {
				fmt.Fprintf(&in, "key%d:value-%d-%s\n", i, i, strings.Repeat("x", i))
				want = append(want, fmt.Sprintf("key%d=value-%d-%s;h1=one,h2=two", i, i, strings.Repeat("x", i)))
			}
			runKcat(t, kcat, in.Bytes(), "-b", b.addr, "-t", topic, "-P", "-K:", "-H", "h1=one", "-H", "h2=two",
				"-z", codec, "-X", "topic.request.required.acks=all")
			// Stored as kcat sent it: with its codec (Produce v0-2 up-converted).
			data, err := os.ReadFile(filepath.Join(b.dir, topic+"-0", "00000000000000000000.log"))
			if err != nil {
				t.Fatal(err)
			}
			// librdkafka sends a batch uncompressed when compressing does not
			// make it smaller (a one-record batch): look for one that is.
			codecs := map[string]int{}
			for p := 0; p < len(data); {
				h, n, err := record.NextBatch(data[p:], len(data)-p)
				if err != nil {
					t.Fatal(err)
				}
				codecs[h.Compression().String()]++
				p += n
			}
			if codecs[codec] == 0 {
				t.Fatalf("stored batches by codec %v: none with %s", codecs, codec)
			}
			out := runKcat(t, kcat, nil, "-b", b.addr, "-t", topic, "-C", "-e", "-o", "beginning", "-f", "%k=%s;%h\n")
			got := strings.Split(strings.TrimSpace(string(out)), "\n")
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("consumed %d lines, first %q; want %d, first %q", len(got), got[0], len(want), want[0])
			}
		})
	}
	// Metadata as kcat lists it.
	out := runKcat(t, kcat, nil, "-b", b.addr, "-L")
	if !strings.Contains(string(out), "kcat-zstd") {
		t.Fatalf("kcat -L does not list the topics:\n%s", out)
	}
}
