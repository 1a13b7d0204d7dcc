package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// mainClass is each tool's Java entry point in the kafka-tools jar: what
// bin/<tool>.sh runs through kafka-run-class.sh.
var mainClass = map[string]string{
	"kafka-topics":              "org.apache.kafka.tools.TopicCommand",
	"kafka-configs":             "org.apache.kafka.tools.ConfigCommand",
	"kafka-metadata-quorum":     "org.apache.kafka.tools.MetadataQuorumCommand",
	"kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
	"kafka-leader-election":     "org.apache.kafka.tools.LeaderElectionCommand",
	"kafka-console-producer":    "org.apache.kafka.tools.ConsoleProducer",
	"kafka-console-consumer":    "org.apache.kafka.tools.consumer.ConsoleConsumer",
	"kafka-consumer-groups":     "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
	"kafka-features":            "org.apache.kafka.tools.FeatureCommand",
	"kafka-transactions":        "org.apache.kafka.tools.TransactionsCommand",
	"kafka-log-dirs":            "org.apache.kafka.tools.LogDirsCommand",
	"kafka-producer-perf-test":  "org.apache.kafka.tools.ProducerPerformance",
}

// toolsLog4j is the tools' logging, as Kafka's config/tools-log4j2.yaml
// sets it: warnings and worse, to standard error.
const toolsLog4j = `appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = STDERR
`

// javaTools runs Kafka's tools from an assembled libs directory.
type javaTools struct {
	libs     string
	log4j    string // the tools' log4j2 properties file
	timeout  time.Duration
	sanitize func(string) string
}

func newJavaTools(libs, tmp string, timeout time.Duration, sanitize func(string) string) (*javaTools, error) {
	path := filepath.Join(tmp, "tools-log4j2.properties")
	if err := os.WriteFile(path, []byte(toolsLog4j), 0o644); err != nil {
		return nil, err
	}
	return &javaTools{libs: libs, log4j: path, timeout: timeout, sanitize: sanitize}, nil
}

// argv is the java command line of tool with args.
func (j *javaTools) argv(tool string, args ...string) []string {
	argv := []string{"java", "-Xmx256m", "-XX:+UseSerialGC", "-Dlog4j2.configurationFile=" + j.log4j,
		"-cp", filepath.Join(j.libs, "*"), mainClass[tool]}
	return append(argv, args...)
}

// run runs tool to completion and returns its combined output and exit
// status (-1: it did not exit by itself, err says why).
func (j *javaTools) run(ctx context.Context, tool string, args ...string) (out string, exit int, err error) {
	b, err := harness.RunTool(ctx, j.timeout, nil, j.argv(tool, args...)...)
	return string(b), exitStatus(err), err
}

// exitStatus is a finished command's exit status: 0, the code it
// exited with, or -1 when it was killed or never ran.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitCode()
	}
	return -1
}

// commandLine is how a step's command reads in the results: the tool's
// script name and arguments, then the java command that ran it.
func (j *javaTools) commandLine(tool string, args ...string) string {
	return j.sanitize(tool + " " + shellJoin(args) + "\n  = " + shellJoin(j.argv(tool, args...)))
}

// shellJoin quotes the arguments that need it for a POSIX shell.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"*$\\;&|<>(){}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
