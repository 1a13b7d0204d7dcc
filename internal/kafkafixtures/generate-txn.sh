#!/usr/bin/env bash
# Regenerates testdata/kafka-$KAFKA_VERSION-txn: a partition a real Apache
# Kafka broker wrote with transactions in it, one of them aborted, so that
# tests can check that Varve reads Kafka's .txnindex and serves the
# partition to read_committed consumers without the aborted records.
# Tests never run this script; they read the committed output.
#
# What it does: formats one KRaft node (kafka-node.sh), creates topic
# "txnfixture" with 1 partition, runs TxnProduce.java (four transactions
# of three records from one transactional producer: committed, aborted,
# committed, committed with 2,000-byte values), stops the node with SIGTERM (a clean shutdown) and copies
# the partition directory and the clean-shutdown marker out.
#
# Usage: internal/kafkafixtures/generate-txn.sh   (needs java 17+ and mvn)
set -euo pipefail

KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${FIXTURE_OUT:-$HERE/testdata/kafka-$KAFKA_VERSION-txn}
TOPIC=txnfixture
# shellcheck source=kafka-node.sh
. "$HERE/kafka-node.sh"

assemble
WORK=$(mktemp -d)
trap 'kill -TERM ${NODE:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
BPORT=$(freeport)
CPORT=$(freeport)
write_props
klass kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$WORK/server.properties"

start_node
klass org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$BPORT" --create --topic "$TOPIC" \
	--partitions 1 --replication-factor 1
java -Xmx256m -cp "$LIBS/*" "$HERE/TxnProduce.java" "127.0.0.1:$BPORT" "$TOPIC"
stop_node

rm -rf "$OUT"
mkdir -p "$OUT"
cp -a "$WORK/data/$TOPIC-0" "$OUT/"
cp -a "$WORK/data/.kafka_cleanshutdown" "$OUT/"
( cd "$OUT" && find . -type f | sort | xargs ls -l ) >&2
