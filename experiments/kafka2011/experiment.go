package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/varve/varve/experiments/internal/kafkadist"
)

// newSystem returns the system named name.
func newSystem(name string) system {
	switch name {
	case sysVarve:
		return &varveSys{}
	case sysKafka:
		return &kafkaSys{}
	case sysJetStream:
		return &jetStreamSys{}
	default:
		return &rabbitSys{}
	}
}

// run runs every system's tests, one system at a time (each stopped
// before the next starts, so no broker competes with another), then writes
// the results. Everything it started is stopped on every path.
func run(ctx context.Context, cfg config) (err error) {
	tmp, err := makeTemp()
	if err != nil {
		return err
	}
	e := &env{cfg: cfg, procs: &procSet{}, tmp: tmp, out: os.Stderr,
		prog: barProgress{w: os.Stderr, enabled: cfg.progress}}
	defer func() {
		err = errors.Join(err, e.procs.stopAll())
		if !cfg.keep {
			os.RemoveAll(tmp)
		}
	}()
	m := readMachine(ctx, tmp)
	if e.needsKafka() {
		fmt.Fprintln(e.out, "== assembling Apache Kafka", cfg.kafkaVersion, "with Maven (cached after the first run)")
		if e.libs, err = kafkadist.Assemble(ctx, cfg.cacheDir, cfg.kafkaVersion); err != nil {
			e.results = append(e.results, result{System: sysKafka, Test: "start", Err: err.Error()})
		}
	}
	for _, name := range cfg.systems {
		if ctx.Err() != nil {
			break
		}
		s := newSystem(name)
		e.runSystem(ctx, s) // a failed start is recorded; the other systems still run
		if stopErr := e.procs.stopAll(); stopErr != nil {
			fmt.Fprintln(e.out, "   stop:", stopErr)
		}
		if !cfg.keep {
			os.RemoveAll(filepath.Join(tmp, name))
		}
	}
	m.LoadEnd = readLoadAvg()
	if ctx.Err() != nil {
		return ctx.Err() // interrupted: keep the committed results as they were
	}
	return e.writeOutputs(m)
}

// needsKafka says whether Kafka's jars are needed (the kafka system, or
// ProducerPerformance against Varve).
func (e *env) needsKafka() bool {
	return slices.Contains(e.cfg.systems, sysKafka) || (e.cfg.perfTool && slices.Contains(e.cfg.systems, sysVarve))
}

// sanitize removes this machine's temporary and cache paths from text
// that goes into the results.
func (e *env) sanitize(s string) string {
	s = strings.ReplaceAll(s, e.tmp, "$TMPDIR")
	return strings.ReplaceAll(s, e.cfg.cacheDir, "$CACHE")
}
