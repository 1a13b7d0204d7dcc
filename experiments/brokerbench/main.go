package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/varve/varve/benchmarks/kafkabench"
	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/pingpong"
	"github.com/varve/varve/experiments/internal/varveproc"
)

type options struct {
	quick        bool
	out          string
	records      int64
	syncRecords  int64
	consumeBytes int64
	varve        string
}

func main() {
	pingpong.MaybeServe()
	var o options
	flag.BoolVar(&o.quick, "quick", false, "a small smoke run")
	flag.StringVar(&o.out, "out", "", "results directory (default experiments/brokerbench/results/<YYYY-MM-DD>, -quick: results/quick)")
	flag.Int64Var(&o.records, "records", 1_000_000, "records per produce case")
	flag.Int64Var(&o.syncRecords, "sync-records", 20_000, "records per one-record-per-request case")
	flag.Int64Var(&o.consumeBytes, "consume-bytes", 2<<30, "bytes in the topic the consume case reads from its start")
	flag.StringVar(&o.varve, "varve", "", "a built varve binary (default: go build ./cmd/varve)")
	flag.Parse()
	if o.quick {
		o.records, o.syncRecords, o.consumeBytes = 50_000, 2_000, 64<<20
	}
	if o.out == "" {
		o.out = harness.OutDir(filepath.Join("experiments", "brokerbench", "results"), time.Now(), o.quick)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	bin, cleanup, err := varveproc.Binary(o.varve)
	if err != nil {
		return err
	}
	defer cleanup()
	r := &report{started: time.Now(), loadBefore: kafkabench.LoadAvg1()}
	kf, err := kafkabench.StartKfake(1)
	if err != nil {
		return err
	}
	defer kf.Close()
	steps := []func(context.Context, options, string, *kafkabench.Kfake, *report) error{
		runProduce, runSync, runConsume, runGroupCommit,
	}
	for _, step := range steps {
		if err := step(ctx, o, bin, kf, r); err != nil {
			return err
		}
	}
	r.loadAfter = kafkabench.LoadAvg1()
	r.took = time.Since(r.started)
	if err := r.write(o.out, o); err != nil {
		return err
	}
	fmt.Printf("results in %s\n", o.out)
	return nil
}
