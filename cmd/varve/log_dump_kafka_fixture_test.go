package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/segment"
)

// kafkaFixtures holds a log dir an Apache Kafka 4.4.0 broker left at a
// clean shutdown; kafkaFixtureInput is what its producers sent
// (internal/kafkafixtures/README.md says how).
const (
	kafkaFixtures     = "../../internal/kafkafixtures/testdata/kafka-4.4.0"
	kafkaFixtureInput = "../../internal/kafkafixtures/input.txt"
)

// dumpKafkaFixtures runs varve log dump --print-records on a copy of the
// fixture log dir and returns each file's section of the output by path,
// and the paths of every file in the copy.
func dumpKafkaFixtures(t *testing.T) (sections map[string]string, files []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(kafkaFixtures)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := runDump(t, "--print-records", dir)
	if strings.Contains(out, "Ignoring unknown file") {
		t.Errorf("a file Kafka wrote was not known:\n%s", out)
	}
	sections = map[string]string{}
	var cur string
	for _, line := range strings.SplitAfter(out, "\n") {
		if p, ok := strings.CutPrefix(line, "Dumping "); ok {
			cur = strings.TrimSuffix(p, "\n")
			continue
		}
		sections[cur] += line
	}
	return sections, files
}

// Kafka: DumpLogSegments over every file a 4.4.0 broker wrote (segments,
// trimmed indexes, producer snapshots, the checkpoints, partition.metadata,
// meta.properties, quorum-state, the clean-shutdown marker): varve log dump
// knows each, finds nothing wrong in any, and prints every record the
// producers sent, in valid batches.
func TestDumpFilesKafkaWrote(t *testing.T) {
	sections, files := dumpKafkaFixtures(t)
	var all strings.Builder
	for _, f := range files {
		body, ok := sections[f]
		if !ok {
			t.Errorf("%s not dumped", f)
			continue
		}
		if filepath.Base(f) == segment.CleanerOffsetCheckpointFile {
			continue // TestDumpEmptyCleanerCheckpointKafkaWrote
		}
		for _, bad := range []string{"corrupt", "invalid", "Mismatch", "isvalid: false", "unknown", "rror"} {
			if strings.Contains(body, bad) {
				t.Errorf("dump of %s reports %q:\n%s", f, bad, body)
			}
		}
		all.WriteString(body)
	}
	out := all.String()
	sent := readSent(t)
	for _, kv := range sent {
		if want := fmt.Sprintf("key: %q payload: %q", kv[0], kv[1]); !strings.Contains(out, want) {
			t.Errorf("dump lacks the record %s", want)
		}
	}
	if got, want := strings.Count(out, "| offset: "), len(sent); got != want {
		t.Errorf("dump prints %d records, the producers sent %d", got, want)
	}
	if got := strings.Count(out, "isvalid: true"); got != 7 { // 3 batches in fixture-0, 4 in fixture-1
		t.Errorf("dump prints %d valid batches, want 7", got)
	}
	for _, want := range []string{
		"cluster.id: dmFydmUta2Fma2EtZml4MQ\n",
		"leaderId: 1 leaderEpoch: 2 ",
		"version: 0 topicId: URjXs_rjRYacNb0H9_9Kmg\n",
		"epoch: 2 startOffset: 8\n",
		"topic: fixture partition: 1 offset: 12\n",
		"producerId: 1000 producerEpoch: 0 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dump lacks %q", want)
		}
	}
}

// Kafka: CheckpointReadBuffer.read takes a file with no first line for a
// checkpoint with no entries; 4.4.0 leaves cleaner-offset-checkpoint empty
// when no log was ever cleaned.
func TestDumpEmptyCleanerCheckpointKafkaWrote(t *testing.T) {
	sections, _ := dumpKafkaFixtures(t)
	for path, body := range sections {
		if filepath.Base(path) == segment.CleanerOffsetCheckpointFile && body != "version: 0 entries: 0\n" {
			t.Errorf("dump of Kafka's empty %s: %q, want no entries", path, body)
		}
	}
}

// readSent returns the key and value of each record in kafkaFixtureInput
// ("round key:value" lines).
func readSent(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open(kafkaFixtureInput)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, kv, _ := strings.Cut(sc.Text(), " ")
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			t.Fatalf("bad input line %q", sc.Text())
		}
		out = append(out, [2]string{k, v})
	}
	return out
}
