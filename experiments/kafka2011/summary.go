package main

import (
	"fmt"
	"math"
	"strings"
)

// The paper's figures (Kreps, Narkhede, Rao, NetDB 2011, section 5).
const (
	paperKafkaB1      = 50_000.0
	paperKafkaB50     = 400_000.0
	paperKafkaConsume = 22_000.0
)

// summary renders summary.md: machine, settings, every result, and the
// paper's ratios beside this run's.
func summary(rs []result, cfg config, m machineInfo, notes []string, charts []chart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kafka2011: the 2011 Kafka paper's producer and consumer tests\n\n")
	fmt.Fprintf(&b, "Measured %s. Command: `go run ./experiments/kafka2011%s`.\n\n", m.date.Format("2006-01-02 15:04 MST"), cmdFlags(cfg))
	writeMachine(&b, m)
	fmt.Fprintf(&b, "\n## Systems and durability\n\n")
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	fmt.Fprintf(&b, "\nEvery test: %d messages of %d bytes, one client. Produce, batch B: B messages sent, then all B "+
		"acknowledged by the broker before the next B (Kafka protocol: one RecordBatch per Produce request, acks=1). "+
		"produce-noack: the paper's own setting, acks=0. Consume: everything the batch-%d test stored, up to %d "+
		"messages (%d KiB) per pull.\n", cfg.records, messageSize, cfg.consumeBatch(), pullMessages, pullBytes>>10)
	writeResults(&b, rs)
	writeRatios(&b, rs, cfg)
	fmt.Fprintf(&b, "\n## Charts\n\n")
	for _, c := range charts {
		fmt.Fprintf(&b, "- %s: `%s.png`, `%s.svg`\n", c.title, c.file, c.file)
	}
	return b.String()
}

func cmdFlags(cfg config) string {
	if cfg.quick {
		return " -quick"
	}
	if cfg.records != 1_000_000 {
		return fmt.Sprintf(" -records %d", cfg.records)
	}
	return ""
}

func writeMachine(b *strings.Builder, m machineInfo) {
	fmt.Fprintf(b, "| machine | |\n|---|---|\n")
	fmt.Fprintf(b, "| CPU | %d × %s |\n| memory | %s |\n| kernel | %s |\n", m.CPUs, m.CPUModel, m.MemTotal, m.Kernel)
	fmt.Fprintf(b, "| data file system (df -hT) | %s |\n| Java | %s |\n| Go | %s |\n", m.disk, m.java, m.GoVersion)
	fmt.Fprintf(b, "| load average (1, 5, 15 min) | start %s, end %s |\n", m.LoadStart, m.LoadEnd)
	fmt.Fprintf(b, "\nThe machine was shared with other work while this ran: rates move with the load; "+
		"broker CPU per message moves far less.\n")
}

func writeResults(b *strings.Builder, rs []result) {
	fmt.Fprintf(b, "\n## Results\n\n")
	fmt.Fprintf(b, "| system | client | test | batch | msgs/s | MiB/s | p50 ms | p99 ms | msgs per stored batch | "+
		"disk B/msg over payload | broker CPU µs/msg | load1 | error |\n")
	fmt.Fprintf(b, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.System, r.Client, r.Test, r.Batch, group(r.msgsPerSec()), ftoa(r.mbPerSec(), 1),
			ftoa(r.LatP50, 2), ftoa(r.LatP99, 2), ftoa(r.recordsPerBatch(), 1), ftoa(r.diskPerMsg(), 0),
			ftoa(r.cpuPerMsg(), 1), ftoa(r.Load1, 1), strings.ReplaceAll(firstLine(r.Err), "|", "/"))
	}
}

// writeRatios sets the paper's ratios beside this run's.
func writeRatios(b *strings.Builder, rs []result, cfg config) {
	cb := cfg.consumeBatch()
	lo, hi := cfg.batches[0], cfg.consumeBatch()
	fmt.Fprintf(b, "\n## Ratios beside the paper's\n\n| ratio | paper (Kafka 0.7, 2011) | kafka | varve | jetstream | rabbitmq |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(name, paper string, f func(sys string) float64) {
		fmt.Fprintf(b, "| %s | %s |", name, paper)
		for _, s := range []string{sysKafka, sysVarve, sysJetStream, sysRabbitMQ} {
			fmt.Fprintf(b, " %s |", ratioText(f(s)))
		}
		b.WriteString("\n")
	}
	prod := func(s string, batch int) float64 { return rate(rs, s, mainClient(s), testProduce, batch) }
	cons := func(s string) float64 { return rate(rs, s, mainClient(s), testConsume, cb) }
	row(fmt.Sprintf("produce batch %d / batch %d", hi, lo), ratioText(paperKafkaB50/paperKafkaB1),
		func(s string) float64 { return prod(s, hi) / prod(s, lo) })
	row(fmt.Sprintf("consume / produce batch %d", hi), ratioText(paperKafkaConsume/paperKafkaB50),
		func(s string) float64 { return cons(s) / prod(s, hi) })
	row(fmt.Sprintf("system / rabbitmq, produce batch %d", lo), "≥ 2 (Kafka vs RabbitMQ)",
		func(s string) float64 { return prod(s, lo) / prod(sysRabbitMQ, lo) })
	row(fmt.Sprintf("system / rabbitmq, produce batch %d", hi), "(RabbitMQ ran batch 1 only)",
		func(s string) float64 { return prod(s, hi) / prod(sysRabbitMQ, hi) })
	row("system / rabbitmq, consume", "> 4 (Kafka vs RabbitMQ)",
		func(s string) float64 { return cons(s) / cons(sysRabbitMQ) })
	row(fmt.Sprintf("system / kafka, produce batch %d", lo), "",
		func(s string) float64 { return prod(s, lo) / prod(sysKafka, lo) })
	row(fmt.Sprintf("system / kafka, produce batch %d", hi), "",
		func(s string) float64 { return prod(s, hi) / prod(sysKafka, hi) })
	row("system / kafka, consume", "", func(s string) float64 { return cons(s) / cons(sysKafka) })
	noack := func(s string, batch int) float64 { return rate(rs, s, clientKgo, testProduceNoAck, batch) }
	row(fmt.Sprintf("produce-noack (paper's setting) batch %d / batch %d", hi, lo), ratioText(paperKafkaB50/paperKafkaB1),
		func(s string) float64 { return noack(s, hi) / noack(s, lo) })
	row(fmt.Sprintf("produce-noack batch %d / paper's Kafka", lo), "1.00",
		func(s string) float64 { return noack(s, lo) / paperKafkaB1 })
	row(fmt.Sprintf("produce-noack batch %d / paper's Kafka", hi), "1.00",
		func(s string) float64 { return noack(s, hi) / paperKafkaB50 })
	row("consume / paper's Kafka", "1.00", func(s string) float64 { return cons(s) / paperKafkaConsume })
	fmt.Fprintf(b, "\nPaper: Kafka %s msg/s (batch 1), %s (batch 50), %s consuming.\n",
		group(paperKafkaB1), group(paperKafkaB50), group(paperKafkaConsume))
}

func ratioText(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return "n/a"
	}
	if f < 0.1 {
		return fmt.Sprintf("%.3f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

// group formats a rate with thousands separators, "" for NaN.
func group(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
