#!/usr/bin/env bash
# Regenerates testdata/kafka-$KAFKA_VERSION: the files a real Apache Kafka
# broker writes for a small topic, so that tests can check that Varve reads
# Kafka's on-disk format. Tests never run this script; they read the
# committed output.
#
# What it does: assembles Kafka from Maven Central (kafka_2.13 and
# kafka-tools, as experiments/kafka2011 does), formats one KRaft node that
# is both broker and controller on loopback, creates topic "fixture" with 2
# partitions, produces input.txt's records in three rounds with idempotent
# console producers (a restart between rounds 2 and 3 bumps the leader
# epoch), stops the node with SIGTERM (a clean shutdown) and copies the
# partition directories and the log dir's checkpoint files out.
#
# Usage: internal/kafkafixtures/generate.sh   (needs java 17+ and mvn)
set -euo pipefail

KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${FIXTURE_OUT:-$HERE/testdata/kafka-$KAFKA_VERSION}
# The metadata log (the __cluster_metadata-0 directory's segment, bootstrap
# checkpoint and quorum files; not its indexes, preallocated to 10 MB and
# rebuilt from the log) goes to a directory of its own, so that the
# partition fixtures above and the metadata fixture can be regenerated
# apart (FIXTURE_OUT or METADATA_OUT pointed at a scratch directory keeps
# one of them as it is).
METADATA_OUT=${METADATA_OUT:-$HERE/testdata/kafka-$KAFKA_VERSION-metadata}
TOPIC=fixture
# shellcheck source=kafka-node.sh
. "$HERE/kafka-node.sh"

# produce ROUND: sends input.txt's lines of that round ("round key:value").
produce() {
	awk -v r="$1" '$1 == r { print $2 }' "$HERE/input.txt" |
		klass org.apache.kafka.tools.ConsoleProducer --bootstrap-server "127.0.0.1:$BPORT" --topic "$TOPIC" \
			--property parse.key=true --property key.separator=: \
			--producer-property enable.idempotence=true --producer-property acks=all \
			--producer-property linger.ms=0
}

assemble
WORK=$(mktemp -d)
trap 'kill -TERM ${NODE:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
BPORT=$(freeport)
CPORT=$(freeport)
write_props
klass kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$WORK/server.properties"

start_node
# segment.ms=1000 and a pause between rounds roll a new segment at the next
# append, so the fixture has several segments and rolled-segment producer
# snapshots.
klass org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$BPORT" --create --topic "$TOPIC" \
	--partitions 2 --replication-factor 1 --config segment.ms=1000
produce 1
sleep 2
produce 2
stop_node
start_node # a restart re-elects the leader: a new leader epoch
sleep 2
produce 3
stop_node

rm -rf "$OUT"
mkdir -p "$OUT"
D=$WORK/data
for p in 0 1; do
	cp -a "$D/$TOPIC-$p" "$OUT/"
done
mkdir -p "$OUT/__cluster_metadata-0"
cp -a "$D/__cluster_metadata-0/quorum-state" "$OUT/__cluster_metadata-0/"
for f in recovery-point-offset-checkpoint replication-offset-checkpoint log-start-offset-checkpoint \
	cleaner-offset-checkpoint meta.properties .kafka_cleanshutdown; do
	[ -e "$D/$f" ] && cp -a "$D/$f" "$OUT/"
done
rm -rf "$METADATA_OUT"
mkdir -p "$METADATA_OUT/__cluster_metadata-0"
for f in "$D"/__cluster_metadata-0/*.log "$D"/__cluster_metadata-0/*.checkpoint \
	"$D"/__cluster_metadata-0/{quorum-state,leader-epoch-checkpoint,partition.metadata}; do
	[ -e "$f" ] && cp -a "$f" "$METADATA_OUT/__cluster_metadata-0/"
done
( cd "$OUT" && find . -type f | sort | xargs ls -l ) >&2
( cd "$METADATA_OUT" && find . -type f | sort | xargs ls -l ) >&2
