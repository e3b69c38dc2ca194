#!/bin/sh
# gen.sh OUT_DIR [PROTO_DIR]
#
# Generates the Python message modules of lmbench's plugin protocol
# (lmbench/plugin/v1/plugin_pb2.py, lmbench/workload/v1/workload_pb2.py)
# into OUT_DIR from the .proto files in PROTO_DIR (default: the repository's
# sdk/proto, else a proto/ directory next to this script). Only messages: the services are served with grpcio's generic
# handlers, so no grpc_tools plugin is needed. Nothing generated is
# committed; the plugin runs this itself on first start (see README.md).
set -eu

here=$(cd "$(dirname "$0")" && pwd -P)
out=${1:?usage: gen.sh OUT_DIR [PROTO_DIR]}
proto=${2:-$here/../../sdk/proto}
[ -n "${2:-}" ] || [ -d "$proto" ] || proto=$here/proto

if ! command -v protoc >/dev/null 2>&1; then
	echo "gen.sh: protoc not found: apt-get install protobuf-compiler" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
cd "$proto"
protoc -I . --python_out="$out" lmbench/plugin/v1/plugin.proto lmbench/workload/v1/workload.proto
