#!/usr/bin/env bash
# Regenerates testdata/kafka-$KAFKA_VERSION-standalone: the metadata log of
# a KRaft node formatted with a dynamic quorum (KIP-853, kafka-storage
# format --standalone), whose bootstrap snapshot and first leader batch
# hold the KRaft control records a static quorum never writes:
# KRaftVersion and KRaftVoters beside SnapshotHeader, SnapshotFooter and
# LeaderChange. Tests never run this script; they read the committed
# output.
#
# What it does: formats one KRaft node (kafka-node.sh) with
# controller.quorum.bootstrap.servers instead of controller.quorum.voters
# and --standalone, starts it (its election writes LeaderChange,
# KRaftVersion and KRaftVoters), stops it with SIGTERM and copies the
# metadata log's segment, bootstrap snapshot and quorum files out (not
# the segment's indexes, preallocated to 10 MB).
#
# Usage: internal/kafkafixtures/generate-standalone.sh   (needs java 17+ and mvn)
set -euo pipefail

KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${FIXTURE_OUT:-$HERE/testdata/kafka-$KAFKA_VERSION-standalone}
# shellcheck source=kafka-node.sh
. "$HERE/kafka-node.sh"

assemble
WORK=$(mktemp -d)
trap 'kill -TERM ${NODE:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
BPORT=$(freeport)
CPORT=$(freeport)
write_props
sed -i "s/^controller.quorum.voters=1@/controller.quorum.bootstrap.servers=/" "$WORK/server.properties"
klass kafka.tools.StorageTool format -t "$CLUSTER_ID" --standalone -c "$WORK/server.properties"
start_node
stop_node

rm -rf "$OUT"
mkdir -p "$OUT/__cluster_metadata-0"
D=$WORK/data/__cluster_metadata-0
for f in "$D"/*.log "$D"/*.checkpoint "$D"/{quorum-state,leader-epoch-checkpoint,partition.metadata}; do
	[ -e "$f" ] && cp "$f" "$OUT/__cluster_metadata-0/"
done
( cd "$OUT" && find . -type f | sort | xargs ls -l ) >&2
