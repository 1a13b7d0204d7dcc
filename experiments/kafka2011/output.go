package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// writeOutputs writes kafka2011.csv, the charts and summary.md.
func (e *env) writeOutputs(m machineInfo) error {
	if err := os.MkdirAll(e.cfg.outDir, 0o755); err != nil {
		return err
	}
	for i := range e.results {
		e.results[i].Err = e.sanitize(e.results[i].Err)
	}
	f, err := os.Create(filepath.Join(e.cfg.outDir, "kafka2011.csv"))
	if err != nil {
		return err
	}
	if err := writeCSV(f, e.results); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	charts := buildCharts(e.results, e.cfg)
	for _, c := range charts {
		if err := c.save(e.cfg.outDir); err != nil {
			return err
		}
	}
	sum := summary(e.results, e.cfg, m, e.notes, charts)
	return os.WriteFile(filepath.Join(e.cfg.outDir, "summary.md"), []byte(sum), 0o644)
}

// mainClient is the client each system's headline figures come from: the
// shared franz-go client for the Kafka protocol.
func mainClient(system string) string {
	switch system {
	case sysJetStream:
		return clientNats
	case sysRabbitMQ:
		return clientRabbitMQ
	}
	return clientKgo
}

// find returns the first result matching system, client, test and batch
// that has no error, or false.
func find(rs []result, system, client, test string, batch int) (result, bool) {
	for _, r := range rs {
		if r.System == system && r.Client == client && r.Test == test && r.Batch == batch && r.Err == "" {
			return r, true
		}
	}
	return result{}, false
}

// rate is the messages/s of a matching result, NaN if there is none.
func rate(rs []result, system, client, test string, batch int) float64 {
	if r, ok := find(rs, system, client, test, batch); ok {
		return r.msgsPerSec()
	}
	return math.NaN()
}

// systemsIn lists the systems that have results, in run order.
func systemsIn(rs []result) []string {
	var out []string
	for _, s := range allSystems {
		if slices.ContainsFunc(rs, func(r result) bool { return r.System == s }) {
			out = append(out, s)
		}
	}
	return out
}

func buildCharts(rs []result, cfg config) []chart {
	systems := systemsIn(rs)
	batchLabels := make([]string, len(cfg.batches))
	for i, b := range cfg.batches {
		batchLabels[i] = fmt.Sprintf("batch %d", b)
	}
	cb := cfg.consumeBatch()
	tests := append(slices.Clone(batchLabels), "consume")
	cpu := func(g, s int) float64 {
		test, batch := testProduce, cb
		if g < len(cfg.batches) {
			batch = cfg.batches[g]
		} else {
			test = testConsume
		}
		if r, ok := find(rs, systems[s], mainClient(systems[s]), test, batch); ok {
			return r.cpuPerMsg()
		}
		return math.NaN()
	}
	charts := []chart{
		{file: "produce_msgs_per_s", title: "Producer: 200-byte messages, one producer, one batch outstanding",
			ylabel: "messages/s", groups: batchLabels, series: systems,
			value: func(g, s int) float64 {
				return rate(rs, systems[s], mainClient(systems[s]), testProduce, cfg.batches[g])
			}},
		{file: "consume_msgs_per_s", title: fmt.Sprintf("Consumer: everything stored by the batch-%d test, one consumer", cb),
			ylabel: "messages/s", groups: []string{"consume"}, series: systems,
			value: func(_, s int) float64 { return rate(rs, systems[s], mainClient(systems[s]), testConsume, cb) }},
		{file: "broker_cpu_us_per_msg", title: "Broker CPU per message (user + system, all broker threads)",
			ylabel: "CPU µs / message", groups: tests, series: systems, value: cpu},
	}
	if pc := perfChart(rs, cfg); pc != nil {
		charts = append(charts, *pc)
	}
	if pc := paperChart(rs, cfg); pc != nil {
		charts = append(charts, *pc)
	}
	return charts
}

// paperChart sets the paper's Kafka beside this run's Kafka-protocol
// brokers in the paper's own setting (acks=0), or returns nil when those
// tests did not run.
func paperChart(rs []result, cfg config) *chart {
	if !slices.Contains(cfg.batches, 1) || !slices.Contains(cfg.batches, 50) || !cfg.noAck {
		return nil
	}
	series := []string{"Kafka 0.7, paper (2011, 8 cores, 1 Gb/s)"}
	var systems []string
	for _, s := range []string{sysKafka, sysVarve} {
		if _, ok := find(rs, s, clientKgo, testProduceNoAck, 1); ok {
			series = append(series, s+" (this run)")
			systems = append(systems, s)
		}
	}
	if len(systems) == 0 {
		return nil
	}
	paper := []float64{paperKafkaB1, paperKafkaB50, paperKafkaConsume}
	return &chart{file: "paper_setting", title: "The paper's setting: no acknowledgements, 200-byte messages",
		ylabel: "messages/s", groups: []string{"produce batch 1", "produce batch 50", "consume"}, series: series,
		value: func(g, s int) float64 {
			if s == 0 {
				return paper[g]
			}
			if g == 2 {
				return rate(rs, systems[s-1], clientKgo, testConsume, cfg.consumeBatch())
			}
			return rate(rs, systems[s-1], clientKgo, testProduceNoAck, []int{1, 50}[g])
		}}
}

// perfChart compares the two producer clients on the Kafka-protocol
// brokers, or returns nil when ProducerPerformance did not run.
func perfChart(rs []result, cfg config) *chart {
	var groups []string
	type key struct {
		system string
		batch  int
	}
	var keys []key
	for _, s := range []string{sysVarve, sysKafka} {
		for _, b := range cfg.batches {
			if _, ok := find(rs, s, clientJava, testProduce, b); ok {
				groups = append(groups, fmt.Sprintf("%s b%d", s, b))
				keys = append(keys, key{s, b})
			}
		}
	}
	if len(groups) == 0 {
		return nil
	}
	clients := []string{clientKgo, clientJava}
	return &chart{file: "producer_clients", title: "The same brokers, two producer clients",
		ylabel: "messages/s", groups: groups, series: clients,
		value: func(g, s int) float64 { return rate(rs, keys[g].system, clients[s], testProduce, keys[g].batch) }}
}
