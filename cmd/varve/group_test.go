package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// startVarve starts a Varve broker with quick group settings and
// returns its address: the group commands are tested against the
// coordinator they were written for.
func startVarve(t *testing.T) string {
	t.Helper()
	cfg, err := config.Parse(map[string]string{
		"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": "",
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		err = b.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return b.Addr().String()
}

// groupCLI runs one command line with the group, produce and consume
// commands on a fresh command tree.
func groupCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := &cobra.Command{Use: "varve", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newGroupCmd(), newProduceCmd(), newConsumeCmd(), newTopicCmd())
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func mustGroupCLI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := groupCLI(t, stdin, args...)
	if err != nil {
		t.Fatalf("varve %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// describeRows parses varve group describe into partition -> [current, end, lag].
func describeRows(t *testing.T, out string) map[string][3]string {
	t.Helper()
	rows := map[string][3]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] == "GROUP" || f[0] == "Consumer" {
			continue
		}
		rows[f[2]] = [3]string{f[3], f[4], f[5]}
	}
	return rows
}

// Kafka's kafka-consumer-groups: a group consumer commits what it read;
// list shows the group, describe its committed offsets, log end offsets
// and lag; reset-offsets moves an inactive group's offsets (printing the
// plan without --execute); delete removes it.
func TestGroupCommands(t *testing.T) {
	addr := startVarve(t)
	mustGroupCLI(t, "", "topic", "create", "orders", "-p", "2", "-b", addr)
	var in strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&in, "order-%d\n", i)
	}
	mustGroupCLI(t, in.String(), "produce", "orders", "-p", "0", "-b", addr)
	mustGroupCLI(t, in.String()[:strings.Index(in.String(), "order-10")], "produce", "orders", "-p", "1", "-b", addr)

	got := mustGroupCLI(t, "", "consume", "orders", "--group", "billing", "--from-beginning", "-c", "5", "-p", "-1", "-b", addr)
	if n := strings.Count(got, "order-"); n != 5 {
		t.Fatalf("consumed %d records, want 5:\n%s", n, got)
	}
	list := mustGroupCLI(t, "", "group", "list", "-b", addr)
	if !strings.Contains(list, "billing") || !strings.Contains(list, "Empty") || !strings.Contains(list, "consumer") {
		t.Fatalf("group list:\n%s", list)
	}
	desc := mustGroupCLI(t, "", "group", "describe", "billing", "-b", addr)
	rows := describeRows(t, desc)
	total := int64(0)
	for _, r := range rows {
		if r[0] == "-" {
			continue
		}
		cur, _ := strconv.ParseInt(r[0], 10, 64)
		end, _ := strconv.ParseInt(r[1], 10, 64)
		lag, _ := strconv.ParseInt(r[2], 10, 64)
		if end-cur != lag {
			t.Fatalf("lag %d is not end %d - committed %d:\n%s", lag, end, cur, desc)
		}
		total += cur
	}
	if total != 5 || !strings.Contains(desc, "has no active members") {
		t.Fatalf("committed %d records in all, want 5:\n%s", total, desc)
	}

	plan := mustGroupCLI(t, "", "group", "reset-offsets", "billing", "--topic", "orders", "--to-latest", "-b", addr)
	if !strings.Contains(plan, "20") || describeRows(t, mustGroupCLI(t, "", "group", "describe", "billing", "-b", addr))["0"][0] == "20" {
		t.Fatalf("a dry run printed %q or changed the offsets", plan)
	}
	mustGroupCLI(t, "", "group", "reset-offsets", "billing", "--topic", "orders", "--to-latest", "--execute", "-b", addr)
	rows = describeRows(t, mustGroupCLI(t, "", "group", "describe", "billing", "-b", addr))
	if rows["0"] != [3]string{"20", "20", "0"} || rows["1"] != [3]string{"10", "10", "0"} {
		t.Fatalf("after --to-latest: %v", rows)
	}
	mustGroupCLI(t, "", "group", "reset-offsets", "billing", "--topic", "orders:1", "--to-offset", "3", "--execute", "-b", addr)
	mustGroupCLI(t, "", "group", "reset-offsets", "billing", "--topic", "orders:0", "--to-earliest", "--execute", "-b", addr)
	rows = describeRows(t, mustGroupCLI(t, "", "group", "describe", "billing", "-b", addr))
	if rows["0"] != [3]string{"0", "20", "20"} || rows["1"] != [3]string{"3", "10", "7"} {
		t.Fatalf("after --to-earliest on 0 and --to-offset 3 on 1: %v", rows)
	}
	future := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	mustGroupCLI(t, "", "group", "reset-offsets", "billing", "--all-topics", "--to-datetime", future, "--execute", "-b", addr)
	rows = describeRows(t, mustGroupCLI(t, "", "group", "describe", "billing", "-b", addr))
	if rows["0"][0] != "20" || rows["1"][0] != "10" {
		t.Fatalf("after --to-datetime an hour ahead: %v", rows)
	}

	mustGroupCLI(t, "", "group", "delete", "billing", "-b", addr)
	if list := mustGroupCLI(t, "", "group", "list", "-b", addr); strings.Contains(list, "billing") {
		t.Fatalf("deleted group still listed:\n%s", list)
	}
}

// Kafka's tool refuses to reset the offsets of a group with members.
func TestGroupResetRefusesActiveGroup(t *testing.T) {
	addr := startVarve(t)
	mustGroupCLI(t, "", "topic", "create", "live", "-p", "1", "-b", addr)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("busy"), kgo.ConsumeTopics("live"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(mustGroupCLI(t, "", "group", "list", "-b", addr), "Stable") {
		if time.Now().After(deadline) {
			t.Fatal("the group never became Stable")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, _, err = groupCLI(t, "", "group", "reset-offsets", "busy", "--topic", "live", "--to-earliest", "--execute", "-b", addr)
	if err == nil || !strings.Contains(err.Error(), "Stable") {
		t.Fatalf("reset of an active group: %v", err)
	}
	members := mustGroupCLI(t, "", "group", "describe", "busy", "--members", "-b", addr)
	if !strings.Contains(members, "/127.0.0.1") {
		t.Fatalf("describe --members:\n%s", members)
	}
	_, _, err = groupCLI(t, "", "group", "reset-offsets", "busy", "--to-earliest", "-b", addr)
	if err == nil || !strings.Contains(err.Error(), "--topic") {
		t.Fatalf("reset without topics: %v", err)
	}
}
