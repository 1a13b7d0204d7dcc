package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The operator's tools beyond topics: features, transactions (through
// Kafka's transactional perf producer), log directories, client quotas
// and a KIP-848 consumer group.

const (
	txnTopic   = "tools-txn"
	txnID      = "tools-txn"
	txnRecords = 20000
	quotaID    = "tools-client"
	kip848     = "tools-kip848"
)

func (e *exp) operatorSteps(ctx context.Context) {
	e.step(ctx, "describe", "exit 0; metadata.version, kraft.version, group.version and transaction.version, each finalized",
		contains("Feature: metadata.version", "Feature: kraft.version", "Feature: group.version", "Feature: transaction.version",
			"FinalizedVersionLevel"),
		"kafka-features", "describe")
	e.step(ctx, "--create "+txnTopic+" --partitions 3 --replication-factor 3", `exit 0, "Created topic tools-txn."`,
		contains("Created topic "+txnTopic+"."), "kafka-topics", "--create", "--topic", txnTopic,
		"--partitions", "3", "--replication-factor", "3")
	e.step(ctx, "--transactional-id "+txnID+" --transaction-duration-ms 200",
		fmt.Sprintf("exit 0; %d records sent in transactions of about 200 ms", txnRecords),
		contains(fmt.Sprintf("%d records sent", txnRecords)),
		"kafka-producer-perf-test", "--topic", txnTopic, "--num-records", strconv.Itoa(txnRecords), "--record-size", "100",
		"--throughput", "-1", "--transactional-id", txnID, "--transaction-duration-ms", "200",
		"--command-property", "acks=all")
	e.transactionSteps(ctx)
	e.step(ctx, "--describe --topic-list "+txnTopic,
		"exit 0; three brokers, each with one log directory holding tools-txn-0, -1 and -2, not empty, no future replica",
		exitedZero(logDirsCheck), "kafka-log-dirs", "--describe", "--broker-list", "1,2,3", "--topic-list", txnTopic)
	e.step(ctx, "--alter --entity-type clients --entity-name "+quotaID+" --add-config producer_byte_rate=1048576",
		`exit 0, "Completed updating config for client tools-client."`, contains("Completed updating config for client "+quotaID+"."),
		"kafka-configs", "--alter", "--entity-type", "clients", "--entity-name", quotaID,
		"--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152")
	e.step(ctx, "--describe --entity-type clients --entity-name "+quotaID, "exit 0; both rates listed",
		contains("Quota configs for client-id '"+quotaID+"' are ", "producer_byte_rate=1048576.0", "consumer_byte_rate=2097152.0"),
		"kafka-configs", "--describe", "--entity-type", "clients", "--entity-name", quotaID)
	e.step(ctx, "--alter --entity-type brokers --entity-default --add-config log.cleaner.threads=2",
		`exit 0, "Completed updating default config for brokers in the cluster."`,
		contains("Completed updating default config for brokers in the cluster."),
		"kafka-configs", "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.cleaner.threads=2")
	e.step(ctx, "--describe --entity-type brokers --entity-name 3 --all",
		"exit 0; broker 3 runs with the cluster default, listed as DYNAMIC_DEFAULT_BROKER_CONFIG above the static default",
		contains("All configs for broker 3 are:",
			"log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2, DEFAULT_CONFIG:log.cleaner.threads=1}"),
		"kafka-configs", "--describe", "--entity-type", "brokers", "--entity-name", "3", "--all")
	e.step(ctx, "--group "+kip848+" group.protocol=consumer isolation.level=read_committed",
		fmt.Sprintf("exit 0; %d records consumed by a KIP-848 consumer reading committed data", txnRecords),
		contains(fmt.Sprintf("Processed a total of %d messages", txnRecords)),
		"kafka-console-consumer", "--topic", txnTopic, "--group", kip848, "--from-beginning",
		"--consumer-property", "group.protocol=consumer", "--consumer-property", "isolation.level=read_committed",
		"--max-messages", strconv.Itoa(txnRecords), "--timeout-ms", "60000")
	// The consumer stops at its last record; a partition's last
	// transaction's COMMIT marker, one offset past it, is left unread
	// unless the same fetch carried it (Kafka's consumer skips a control
	// batch only as it reads on), so the lag is 0 or 1.
	e.step(ctx, "--describe --group "+kip848, "exit 0; a row per partition of tools-txn, each with LAG 0 or 1 (the last COMMIT marker)",
		exitedZero(func(out string) (string, bool) {
			var seen []string
			caughtUp := 0
			for _, r := range parseGroupDescribe(out) {
				if r.Topic == txnTopic {
					seen = append(seen, fmt.Sprintf("%d: lag %s", r.Partition, r.Lag))
					if r.Lag == "0" || r.Lag == "1" {
						caughtUp++
					}
				}
			}
			return strings.Join(seen, ", "), caughtUp == 3
		}), "kafka-consumer-groups", "--describe", "--group", kip848)
}

func (e *exp) transactionSteps(ctx context.Context) {
	e.step(ctx, "list", "exit 0; tools-txn in state CompleteCommit",
		exitedZero(func(out string) (string, bool) {
			for _, row := range tableRows(out) {
				if len(row) >= 4 && row[0] == txnID {
					return "tools-txn " + row[3], row[3] == "CompleteCommit"
				}
			}
			return "no row for " + txnID, false
		}), "kafka-transactions", "list")
	e.step(ctx, "describe --transactional-id "+txnID, "exit 0; state CompleteCommit, no partitions in a transaction",
		exitedZero(func(out string) (string, bool) {
			rows := tableRows(out)
			if len(rows) < 2 || len(rows[1]) < 5 {
				return "no row", false
			}
			return "state " + rows[1][4], rows[1][4] == "CompleteCommit" && len(rows[1]) == 8
		}), "kafka-transactions", "describe", "--transactional-id", txnID)
	e.step(ctx, "describe-producers --topic "+txnTopic+" --partition 0",
		"exit 0; the perf producer's id, no transaction open (CurrentTransactionStartOffset None)",
		exitedZero(func(out string) (string, bool) {
			rows := tableRows(out)
			if len(rows) < 2 {
				return "no producer row", false
			}
			last := rows[1][len(rows[1])-1]
			return fmt.Sprintf("%d producer(s), the first with CurrentTransactionStartOffset %s", len(rows)-1, last), last == "None"
		}), "kafka-transactions", "describe-producers", "--topic", txnTopic, "--partition", "0")
	for _, id := range []string{"1", "2", "3"} {
		e.step(ctx, "find-hanging --broker-id "+id, "exit 0; the header only: no hanging transaction",
			exitedZero(func(out string) (string, bool) {
				rows := tableRows(out)
				return fmt.Sprintf("%d hanging", max(len(rows)-1, 0)), len(rows) == 1
			}), "kafka-transactions", "find-hanging", "--broker-id", id)
	}
}

// tableRows splits kafka-transactions' tab-separated table into rows of
// trimmed cells, the header first; lines without a tab are left out.
func tableRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "\t") {
			continue
		}
		var row []string
		for _, c := range strings.Split(strings.TrimRight(l, "\t "), "\t") {
			row = append(row, strings.TrimSpace(c))
		}
		rows = append(rows, row)
	}
	return rows
}

// logDirs is kafka-log-dirs --describe's JSON line.
type logDirs struct {
	Brokers []struct {
		Broker  int32
		LogDirs []struct {
			Error      any
			LogDir     string
			Partitions []struct {
				Partition string
				Size      int64
				OffsetLag int64
				IsFuture  bool
			}
		}
	}
}

var reJSONLine = regexp.MustCompile(`(?m)^\{"brokers".*$`)

func logDirsCheck(out string) (string, bool) {
	line := reJSONLine.FindString(out)
	if line == "" {
		return "no JSON line in the output", false
	}
	var d logDirs
	if err := json.Unmarshal([]byte(line), &d); err != nil {
		return err.Error(), false
	}
	var seen []string
	ok := len(d.Brokers) == 3
	for _, b := range d.Brokers {
		var parts []string
		for _, dir := range b.LogDirs {
			for _, p := range dir.Partitions {
				parts = append(parts, fmt.Sprintf("%s %dB", p.Partition, p.Size))
				ok = ok && p.Size > 0 && !p.IsFuture
			}
		}
		slices.Sort(parts)
		ok = ok && len(b.LogDirs) == 1 && len(parts) == 3
		seen = append(seen, fmt.Sprintf("broker %d: %s", b.Broker, strings.Join(parts, ", ")))
	}
	return strings.Join(seen, "; "), ok
}
