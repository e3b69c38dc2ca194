#!/usr/bin/env bash
# Prints the non-test lines of every Go package (generated code and
# testdata apart), largest first, the CLI's total without internal/ui and
# its test-support packages, and the longest functions: the figures the
# layout is held to (no core/ package over 2,500 lines, cmd/lmbench under
# 1,500, no function over 80 lines unless its doc comment says why).
set -euo pipefail
cd "$(dirname "$0")/.."
count() { cat "$@" /dev/null | wc -l; }
echo "non-test lines by package:"
for d in $(git ls-files 'core/*.go' 'sdk/*.go' 'cmd/*.go' 'plugins/*.go' | grep -v '_test\.go$' | grep -v '\.pb\.go$' | grep -v '/testdata/' | xargs -n1 dirname | sort -u); do
	printf '%6d  %s\n' "$(count $(git ls-files "$d/*.go" | grep -v '_test\.go$' | grep -v '\.pb\.go$' | awk -v d="$d" -F/ 'NF == split(d, a, "/") + 1'))" "$d"
done | sort -rn
printf '\ncmd/lmbench without internal/: %d lines\n' "$(count $(git ls-files 'cmd/lmbench/*.go' | grep -v '_test\.go$' | awk -F/ 'NF == 3'))"
echo
echo "longest functions:"
(cd scripts/funclen && GOWORK=off go run . -top "${TOP:-10}" ../../core ../../sdk ../../cmd ../../plugins ../../examples) | sed 's#\.\./\.\./##'
