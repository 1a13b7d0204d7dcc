package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kcat -P -K: -H: lines become records with keys and headers; consumed
// back from the beginning with -e, every field comes back as sent, in
// order, with dense offsets.
func TestProduceThenConsumeKeysAndHeaders(t *testing.T) {
	b := startCluster(t)
	mustVarve(t, "", "topic", "create", "t", "-b", b, "-p", "2")
	in := "k1:v1\nk2:v:2\nno key\n:empty key\nk5:\n\n"
	_, summary, err := varve(t, in, "produce", "t", "-b", b, "-K", ":", "-H", "h1=a", "-H", "h2=b=c", "-p", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(summary, "produced 6 records (") || !strings.Contains(summary, "partitions 1:6") {
		t.Errorf("summary %q", summary)
	}
	out := mustVarve(t, "", "consume", "t", "-b", b, "--from-beginning", "-e", "-f", `%p %o [%k] %K [%v] %S %h\n`)
	want := "1 0 [k1] 2 [v1] 2 h1=a,h2=b=c\n" +
		"1 1 [k2] 2 [v:2] 3 h1=a,h2=b=c\n" +
		"1 2 [] -1 [no key] 6 h1=a,h2=b=c\n" +
		"1 3 [] 0 [empty key] 9 h1=a,h2=b=c\n" +
		"1 4 [k5] 2 [] 0 h1=a,h2=b=c\n" +
		"1 5 [] -1 [] 0 h1=a,h2=b=c\n"
	if out != want {
		t.Errorf("consumed:\n%s\nwant:\n%s", out, want)
	}
	if out := mustVarve(t, "", "consume", "t", "-b", b, "-e", "--partition", "0", "-o", "earliest"); out != "" {
		t.Errorf("partition 0 should be empty, got %q", out)
	}
}

// Kafka stores batches as the producer compressed them; every codec the
// protocol has (compression.type) round-trips through produce and consume.
func TestProduceConsumeEveryCodec(t *testing.T) {
	b := startCluster(t)
	var in strings.Builder
	for i := range 200 {
		fmt.Fprintf(&in, "record %d %s\n", i, strings.Repeat("x", i%50))
	}
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			mustVarve(t, "", "topic", "create", codec, "-b", b, "-p", "3")
			mustVarve(t, in.String(), "produce", codec, "-b", b, "--compression", codec, "--linger", "5ms")
			out := mustVarve(t, "", "consume", codec, "-b", b, "--from-beginning", "-e")
			if got, want := sortedLines(out), sortedLines(in.String()); got != want {
				t.Errorf("%s: consumed %d bytes, want the %d produced", codec, len(out), len(in.String()))
			}
		})
	}
}

func sortedLines(s string) string {
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(ls)
	return strings.Join(ls, "\n")
}

// --value --count sends one value many times, with --key.
func TestProduceValueCount(t *testing.T) {
	b := startCluster(t)
	mustVarve(t, "", "topic", "create", "v", "-b", b, "-p", "1")
	mustVarve(t, "ignored\n", "produce", "v", "-b", b, "--value", "hello", "--key", "k", "--count", "3")
	out := mustVarve(t, "", "consume", "v", "-b", b, "--from-beginning", "-e", "-f", `%k=%v;`)
	if out != "k=hello;k=hello;k=hello;" {
		t.Errorf("consumed %q", out)
	}
}

// Java producer: enable.idempotence=true with acks other than all is a
// configuration error; left at its default it is turned off instead.
func TestProduceIdempotenceNeedsAcksAll(t *testing.T) {
	b := startCluster(t)
	mustVarve(t, "", "topic", "create", "i", "-b", b, "-p", "1")
	if _, _, err := varve(t, "x\n", "produce", "i", "-b", b, "--acks", "1", "--idempotent"); err == nil {
		t.Error("acks=1 with --idempotent accepted")
	}
	for _, acks := range []string{"0", "1", "all"} {
		mustVarve(t, "x\n", "produce", "i", "-b", b, "--acks", acks)
	}
	if _, _, err := varve(t, "x\n", "produce", "i", "-b", b, "--compression", "brotli"); err == nil {
		t.Error("compression brotli accepted")
	}
	if _, _, err := varve(t, "x\n", "produce", "i", "-b", b, "-H", "novalue"); err == nil {
		t.Error("header without = accepted")
	}
}
