package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/progress"
	"github.com/varve/varve/experiments/internal/varveproc"
)

// runSpec is one attack at one scale.
type runSpec struct {
	attack string
	scale  int
}

func (s runSpec) String() string { return fmt.Sprintf("%s x%d", s.attack, s.scale) }

// result is what one run measured.
type result struct {
	runSpec
	baseline int64 // RSS before the attack
	peak     int64 // RSS peak during the attack
	killed   bool  // the watchdog killed the broker
	serves   bool  // the broker answered and kept a record afterwards
	detail   string
	after    string // what the check after the attack saw
	seconds  float64
}

type experiment struct {
	*harness.Session
	cfg     config
	bin     string
	results []result
}

func run(ctx context.Context, cfg config) (string, error) {
	s, err := harness.Start(cfg.out, cfg.quick)
	if err != nil {
		return "", err
	}
	bin, cleanup, err := varveproc.Binary(cfg.varve)
	if err != nil {
		return "", err
	}
	defer cleanup()
	e := &experiment{Session: s, cfg: cfg, bin: bin}
	var plan []runSpec
	for _, sc := range cfg.scales {
		for _, a := range cfg.attacks {
			plan = append(plan, runSpec{attack: a, scale: sc})
		}
	}
	e.Bar = progress.New(os.Stderr, len(plan), !cfg.noProgress)
	e.results, err = harness.Execute(ctx, e.Bar, plan, e.runOne)
	e.End()
	if err != nil {
		return "", err
	}
	return e.Out, e.writeOutputs(e.Out)
}

// runOne attacks a fresh broker and measures it.
func (e *experiment) runOne(ctx context.Context, spec runSpec) (result, error) {
	srv, err := varveproc.Start(e.bin, varveproc.Options{Env: []string{"GOMEMLIMIT=" + e.cfg.goMemLimit}})
	if err != nil {
		return result{}, err
	}
	defer srv.Stop()
	time.Sleep(500 * time.Millisecond) // let start-up allocations settle
	res := result{runSpec: spec}
	if res.baseline, err = rssOf(srv.Pid()); err != nil {
		return res, err
	}
	w := watchRSS(srv.Pid(), e.cfg.killAt, srv.Kill)
	t := target{addr: srv.Addr, n: float64(spec.scale) * e.cfg.size, hold: holdFor(e.cfg.quick)}
	start := time.Now()
	detail, release, err := attacks[spec.attack](ctx, t)
	res.seconds = time.Since(start).Seconds()
	if release != nil {
		release()
	}
	res.peak, res.killed = w.end(), w.killed.Load()
	res.detail = detail
	if err != nil {
		res.detail = "attack stopped: " + err.Error()
	}
	if !res.killed {
		res.serves, res.after = servesAfter(ctx, srv.Addr)
	} else {
		res.after = fmt.Sprintf("killed past %s", harness.BytesName(float64(e.cfg.killAt)))
	}
	return res, nil
}

// holdFor is how long an attack keeps its connections open while the
// broker's memory is sampled.
func holdFor(quick bool) time.Duration {
	if quick {
		return 3 * time.Second
	}
	return 8 * time.Second
}

// servesAfter checks that the broker, once the attack's connections are
// closed, acknowledges a record and returns it within 10 s.
func servesAfter(ctx context.Context, addr string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("after-attack"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return false, err.Error()
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "after-attack", Value: []byte("still here")}).FirstErr(); err != nil {
		return false, "produce: " + err.Error()
	}
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		for _, r := range fs.Records() {
			if string(r.Value) == "still here" {
				return true, "produce and fetch ok"
			}
		}
	}
	return false, "record not read back in 10 s"
}
