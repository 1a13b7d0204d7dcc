package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/varve/varve/experiments/internal/flagval"
	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/kafkadist"
)

// The systems and scenarios, by the names the flags and the CSV use.
const (
	sysVarve = "varve"
	sysKafka = "kafka"

	scnKill       = "kill-leader"     // SIGKILL of the partition leader's node
	scnTerm       = "shutdown-leader" // SIGTERM (controlled shutdown) of the partition leader's node
	scnController = "kill-controller" // SIGKILL of the active controller's node
)

var (
	allSystems   = []string{sysVarve, sysKafka}
	allScenarios = []string{scnKill, scnTerm, scnController}
)

// config is the experiment's command line.
type config struct {
	harness.Common
	systems, scenarios []string
	trials             int
	profile            profile
	settle             time.Duration // quiet time with a full ISR before each trial
	trialTimeout       time.Duration // longest wait for any one event of a trial
	kafkaVersion       string
	kafkaHeap          string
	cacheDir           string
	varveBin           string
	keep               bool
	clientLog          string // franz-go's debug log of the producer, for diagnosis
}

// profile is the test profile both systems run with: Kafka's property
// names, the timeouts scaled down the same way for both.
type profile struct {
	sessionTimeout    time.Duration // broker.session.timeout.ms (Kafka: 9000)
	heartbeatInterval time.Duration // broker.heartbeat.interval.ms (Kafka: 2000)
	electionTimeout   time.Duration // controller.quorum.election.timeout.ms (Kafka: 1000)
	fetchTimeout      time.Duration // controller.quorum.fetch.timeout.ms (Kafka: 2000)
}

// props are the profile's server properties, the same for every node of
// either system. Automatic preferred-leader rebalancing is off in both
// so that leadership moves only because of a trial's fault.
func (p profile) props() map[string]string {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	return map[string]string{
		"broker.session.timeout.ms":             ms(p.sessionTimeout),
		"broker.heartbeat.interval.ms":          ms(p.heartbeatInterval),
		"controller.quorum.election.timeout.ms": ms(p.electionTimeout),
		"controller.quorum.fetch.timeout.ms":    ms(p.fetchTimeout),
		"auto.leader.rebalance.enable":          "false",
		"unclean.leader.election.enable":        "false",
	}
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("failover", flag.ContinueOnError)
	c.Register(fs, "failover", "3 trials per scenario instead of 20")
	systems := fs.String("systems", "varve,kafka", "systems to run, comma-separated: varve, kafka")
	scenarios := fs.String("scenarios", "kill-leader,shutdown-leader,kill-controller", "scenarios, comma-separated")
	fs.IntVar(&c.trials, "trials", 20, "trials per scenario and system")
	fs.DurationVar(&c.profile.sessionTimeout, "session-timeout", 3*time.Second, "broker.session.timeout.ms for both systems")
	fs.DurationVar(&c.profile.heartbeatInterval, "heartbeat-interval", 500*time.Millisecond, "broker.heartbeat.interval.ms for both systems")
	fs.DurationVar(&c.profile.electionTimeout, "election-timeout", time.Second, "controller.quorum.election.timeout.ms for both systems")
	fs.DurationVar(&c.profile.fetchTimeout, "fetch-timeout", 2*time.Second, "controller.quorum.fetch.timeout.ms for both systems")
	fs.DurationVar(&c.settle, "settle", 2*time.Second, "time with a full ISR and a steady producer before each trial")
	fs.DurationVar(&c.trialTimeout, "trial-timeout", 90*time.Second, "longest wait for any one event of a trial (a new leader, an ack, a full ISR)")
	fs.StringVar(&c.kafkaVersion, "kafka-version", "4.4.0", "Apache Kafka version to assemble from Maven Central")
	fs.StringVar(&c.kafkaHeap, "kafka-heap", "1g", "each Kafka node's JVM heap (Kafka's default KAFKA_HEAP_OPTS is 1g)")
	fs.StringVar(&c.cacheDir, "cache", kafkadist.DefaultCacheDir(), "where the assembled Kafka is kept between runs")
	fs.StringVar(&c.varveBin, "varve-bin", "", "a varve binary to run (default: build ./cmd/varve)")
	fs.StringVar(&c.clientLog, "client-log", "", "write the producer client's debug log (franz-go) to FILE.<system>, for diagnosis")
	fs.BoolVar(&c.keep, "keep", false, "keep the nodes' directories (logs, data) after the run")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.Quick && !harness.Flags(fs)["trials"] {
		c.trials = 3
	}
	c.NoModel = true // no figure here is compared with the disk model
	var err error
	if c.systems, err = oneOf("systems", *systems, allSystems); err != nil {
		return c, err
	}
	if c.scenarios, err = oneOf("scenarios", *scenarios, allScenarios); err != nil {
		return c, err
	}
	return c, c.check()
}

func (c config) check() error {
	p := c.profile
	switch {
	case c.trials < 1:
		return fmt.Errorf("-trials %d: want at least 1", c.trials)
	case p.heartbeatInterval <= 0 || p.sessionTimeout <= p.heartbeatInterval:
		return fmt.Errorf("-session-timeout %v must exceed -heartbeat-interval %v > 0", p.sessionTimeout, p.heartbeatInterval)
	case p.electionTimeout <= 0 || p.fetchTimeout <= 0:
		return fmt.Errorf("-election-timeout and -fetch-timeout must be positive")
	case c.trialTimeout < p.sessionTimeout:
		return fmt.Errorf("-trial-timeout %v is shorter than the session timeout", c.trialTimeout)
	}
	return nil
}

// oneOf parses a comma-separated list whose items must be in valid.
func oneOf(flagName, s string, valid []string) ([]string, error) {
	items := flagval.List(s)
	if len(items) == 0 {
		return nil, fmt.Errorf("-%s: empty", flagName)
	}
	for _, it := range items {
		if !slices.Contains(valid, it) {
			return nil, fmt.Errorf("-%s: unknown %q (want %v)", flagName, it, valid)
		}
	}
	return items, nil
}

// tempRoot is where the nodes' directories go: under -dir.
func (c config) tempRoot() (string, error) { return os.MkdirTemp(c.Dir, "varve-failover-") }
