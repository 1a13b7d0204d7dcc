package cluster_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: KIP-890 (TRANSACTION_ABORTABLE) with Kafka 4.4's Java
// producer, at transaction.version 1 so that it sends Produce v11 and
// the partition leader verifies. Its transaction is aborted under it
// (an EndTxn of the same producer id and epoch, as the coordinator's
// timeout would); its next produce to the partition it had added is
// TRANSACTION_ABORTABLE (TransactionAbortableException), which the
// producer takes as abortable: it aborts, then commits a next
// transaction with the same transactional id, and only that one is
// read_committed. (Kafka 4.4's producer also aborts and goes on after
// an INVALID_TXN_STATE produce, as an older broker would answer; what
// the test tells apart is the code the client is given.)
func TestJavaProducerTransactionAbortable(t *testing.T) {
	libs := kafkaLibs(t)
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not installed")
	}
	classes := t.TempDir()
	if out, err := exec.Command("javac", "-cp", filepath.Join(libs, "*"), "-d", classes,
		filepath.Join("testdata", "java", "TxnAbortable.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "jab", 1, nil)
	cl := client(t, b.addr, kgo.MaxVersions(tv1Versions()))
	res, err := kadm.NewClient(cl).UpdateFeatures(ctx(t), false,
		kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 1, UpgradeType: 2}) // SAFE_DOWNGRADE
	if err != nil || res.Error() != nil {
		t.Fatalf("transaction.version 1: %v %v", err, res.Error())
	}

	cx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", "-Xmx256m", "-cp", classes+string(filepath.ListSeparator)+filepath.Join(libs, "*"),
		"TxnAbortable", b.addr, "jab-tx", "jab")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "produced" {
		cmd.Wait()
		t.Fatalf("the Java producer did not produce: %q\n%s", sc.Text(), stderr.String())
	}
	st := describeOne(t, cl, "jab-tx")
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch = "jab-tx", st.ProducerID, st.ProducerEpoch
	if r, err := end.RequestWith(ctx(t), cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("EndTxn abort from the side: %v %+v", err, r)
	}
	waitWithin(t, 10*time.Second, "the transaction aborted", func() bool {
		return describeOne(t, cl, "jab-tx").State == "CompleteAbort"
	})
	fmt.Fprintln(stdin, "go on")
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Java producer: %v, printed %q\n%s", err, lines, stderr.String())
	}
	want := []string{"late: TransactionAbortableException", "abort: ok", "next: committed"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Java producer printed %q, want %q\n%s", lines, want, stderr.String())
	}
	if got := readAll(t, b.addr, "jab", true, 1); fmt.Sprint(got) != "[next]" {
		t.Errorf("read_committed read %v", got)
	}
}
