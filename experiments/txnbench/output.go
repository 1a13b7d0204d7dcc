package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

func writeResults(s *harness.Session, cfg config, settings map[string]string, rs []runResult, reads []readOutcome) error {
	cs := cells(cfg, rs)
	if err := writeRunsCSV(filepath.Join(s.Out, "runs.csv"), rs); err != nil {
		return err
	}
	if err := writeCellsCSV(filepath.Join(s.Out, "summary.csv"), cs); err != nil {
		return err
	}
	if err := writeReadsCSV(filepath.Join(s.Out, "reads.csv"), reads); err != nil {
		return err
	}
	if err := plotRatios(s.Out, cfg, cs, rs); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Out, "summary.md"), []byte(summary(s, cfg, settings, cs, rs, reads)), 0o644)
}

// runsHeader names the columns of runs.csv, one row per timed run.
var runsHeader = []string{"rep", "records_per_round", "mode", "system", "records", "rounds", "seconds",
	"records_per_s", "round_p50_ms", "round_p99_ms", "concurrent_txn_backoffs", "load1"}

func runRow(r runResult) []string {
	return []string{strconv.Itoa(r.rep), strconv.Itoa(r.perTxn), r.mode, r.system,
		strconv.FormatInt(r.records, 10), strconv.FormatInt(r.rounds, 10), harness.G(r.elapsed.Seconds()),
		harness.G(r.recordsPerSec()), harness.G(roundP50(r) / 1e6), harness.G(roundP99(r) / 1e6),
		strconv.FormatInt(r.backoffs, 10), harness.G(r.load1)}
}

func writeRunsCSV(path string, rs []runResult) error {
	var rows [][]string
	for _, r := range rs {
		rows = append(rows, runRow(r))
	}
	return harness.WriteCSV(path, runsHeader, rows)
}

func writeCellsCSV(path string, cs []cell) error {
	header := []string{"records_per_txn", "system", "txn_records_per_s", "plain_records_per_s", "txn_over_plain",
		"txn_round_p50_ms", "plain_round_p50_ms", "backoffs_per_txn"}
	var rows [][]string
	for _, c := range cs {
		rows = append(rows, []string{strconv.Itoa(c.perTxn), c.system, harness.G(c.txnRPS), harness.G(c.plainRPS),
			harness.G(c.ratio), harness.G(ms(c.txnRoundP50)), harness.G(ms(c.plainRound)), harness.G(c.backoffs)})
	}
	return harness.WriteCSV(path, header, rows)
}

func writeReadsCSV(path string, reads []readOutcome) error {
	header := []string{"records_per_round", "mode", "system", "committed", "records", "distinct", "duplicates",
		"foreign", "seconds", "records_per_s", "complete"}
	var rows [][]string
	for _, r := range reads {
		rows = append(rows, []string{strconv.Itoa(r.perTxn), r.mode, r.system, strconv.FormatUint(r.want, 10),
			strconv.FormatInt(r.records, 10), strconv.FormatInt(r.distinct, 10), strconv.FormatInt(r.dups, 10),
			strconv.FormatInt(r.foreign, 10), harness.G(r.elapsed.Seconds()), harness.G(r.recordsPerSec()),
			strconv.FormatBool(r.complete(r.want))})
	}
	return harness.WriteCSV(path, header, rows)
}

// summary is summary.md: the settings, the produce table, Varve/Kafka
// per case, the reads and the plots.
func summary(s *harness.Session, cfg config, settings map[string]string, cs []cell, rs []runResult, reads []readOutcome) string {
	var b strings.Builder
	var load1 []float64
	for _, r := range rs {
		load1 = append(load1, r.load1)
	}
	s.WriteHeader(&b, "Transactional produce: Varve beside Apache Kafka", "txnbench", load1)
	writeSettings(&b, cfg, settings)
	writeProduceTable(&b, cs)
	writeVersusTable(&b, cfg, rs)
	writeReadsTable(&b, reads)
	plots := []string{"txn-over-plain"}
	if slices.Contains(cfg.systems, sysVarve) && slices.Contains(cfg.systems, sysKafka) {
		plots = append(plots, "varve-over-kafka")
	}
	harness.WritePlots(&b, plots)
	return b.String()
}

func writeSettings(b *strings.Builder, cfg config, settings map[string]string) {
	b.WriteString("\n## Settings (both systems)\n\n")
	for _, name := range cfg.systems {
		if st, ok := settings[name]; ok {
			fmt.Fprintf(b, "- **%s**: %s\n", name, st)
		}
	}
	fmt.Fprintf(b, "- topics: one per case and mode, %d partition(s), replication factor 1; every other setting at its default (no fsync on the produce path, `transaction.state.log.num.partitions` 50)\n", cfg.partitions)
	fmt.Fprintf(b, "- client: one franz-go producer per run, acks=all, idempotent, %d-byte values; a round is N records produced then flushed, "+
		"inside BeginTransaction … EndTransaction(commit) in mode txn, without a transaction in mode plain; the next round starts when the last ends; "+
		"CONCURRENT_TRANSACTIONS back-off %s; %s\n", cfg.recordSize, backoffName(cfg.txnBackoff), clientTVName(cfg.clientTV1))
	fmt.Fprintf(b, "- before the runs, %v of untimed one-record transactions on each system (creates `__transaction_state`, warms a JVM)\n", cfg.prime)
	fmt.Fprintf(b, "- %d repetition(s) of every run, %v warm-up then %v timed; runs interleaved system by system (Varve, Kafka, Varve, Kafka …); "+
		"ratios are medians of per-repetition ratios of adjacent runs\n\n", cfg.reps, cfg.warmup, cfg.duration)
}

func writeProduceTable(b *strings.Builder, cs []cell) {
	b.WriteString("## Produce (medians over repetitions)\n\n")
	b.WriteString("| records per txn | system | txn records/s | plain records/s | txn / plain | txn round p50 | plain round p50 | CONCURRENT_TRANSACTIONS back-offs per txn |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range cs {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s ms | %s ms | %s |\n", c.perTxn, c.system, rate(c.txnRPS), rate(c.plainRPS),
			ratio(c.ratio), fixed(ms(c.txnRoundP50)), fixed(ms(c.plainRound)), fixed(c.backoffs))
	}
	b.WriteString("\n")
}

func writeVersusTable(b *strings.Builder, cfg config, rs []runResult) {
	for _, pair := range [][2]string{{sysVarve, sysKafka}, {sysVarve, sysVarveBase}} {
		if !slices.Contains(cfg.systems, pair[0]) || !slices.Contains(cfg.systems, pair[1]) {
			continue
		}
		fmt.Fprintf(b, "## %s / %s (records/s, median of per-repetition ratios)\n\n", pair[0], pair[1])
		b.WriteString("| records per txn | txn | plain |\n|---:|---:|---:|\n")
		for _, n := range cfg.cases {
			fmt.Fprintf(b, "| %d | %s | %s |\n", n, ratio(versusOf(rs, n, modeTxn, pair[0], pair[1])),
				ratio(versusOf(rs, n, modePlain, pair[0], pair[1])))
		}
		b.WriteString("\n")
	}
}

func writeReadsTable(b *strings.Builder, reads []readOutcome) {
	if len(reads) == 0 {
		return
	}
	b.WriteString("## One read_committed consumer, each topic from its start (after all produce runs)\n\n")
	b.WriteString("| topic | system | committed records | read | records/s | every committed record once, nothing else |\n")
	b.WriteString("|---|---|---:|---:|---:|---|\n")
	for _, r := range reads {
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s |\n", topicName(r.mode, r.perTxn), r.system, r.want, r.records,
			rate(r.recordsPerSec()), yesNo(r.complete(r.want), r))
	}
	b.WriteString("\n")
}

func yesNo(ok bool, r readOutcome) string {
	if ok {
		return "yes"
	}
	return fmt.Sprintf("**no**: %d distinct, %d duplicated, %d foreign", r.distinct, r.dups, r.foreign)
}

func backoffName(d time.Duration) string {
	if d == 0 {
		return "franz-go's default (20 ms, growing while the error persists)"
	}
	return d.String()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func rate(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func fixed(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func clientTVName(tv1 bool) string {
	if tv1 {
		return "capped at transaction version 1's requests (-client-tv1)"
	}
	return "the transaction version each cluster offers (2: KIP-890 part 2 where finalized)"
}
