#!/usr/bin/env bash
# Builds Ollama from the Go module proxy for the live tier (make test-live)
# and caches the binary outside git; a second run reuses it.
#
# The module zip drops every folder named "vendor", so the bundled
# llama.cpp's third-party headers come from Debian (nlohmann-json3-dev,
# libstb-dev) and miniaudio, which only serves audio input, is replaced by
# a stub header whose decoder always fails. CPU only, -march=native.
#
# Prints the binary's path on stdout; progress goes to stderr.
set -euo pipefail

OLLAMA_VERSION="${OLLAMA_VERSION:-v0.17.4}"
CACHE="${LIVE_OLLAMA_CACHE:-$HOME/.cache/lmbench-live}"
bin="$CACHE/ollama-$OLLAMA_VERSION"

if [[ -x "$bin" ]]; then
	echo "ollama $OLLAMA_VERSION: cached at $bin" >&2
	echo "$bin"
	exit 0
fi

for h in /usr/include/nlohmann/json.hpp /usr/include/stb/stb_image.h; do
	[[ -f "$h" ]] || { echo "missing $h: apt-get install -y nlohmann-json3-dev libstb-dev" >&2; exit 1; }
done

mkdir -p "$CACHE"
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The stub's folder is a fixed path: it is in the cgo flags, and the Go
# build cache keys compiled objects by them, so a rebuild reuses them.
inc="$CACHE/include"
mkdir -p "$inc/miniaudio"
cat >"$inc/miniaudio/miniaudio.h" <<'H'
/* Stub of miniaudio's single header: llama.cpp's mtmd helper decodes audio
 * input with it; the live tier sends text only, so decoding always fails. */
#ifndef LMBENCH_MINIAUDIO_STUB_H
#define LMBENCH_MINIAUDIO_STUB_H
#include <stddef.h>
#include <stdint.h>
typedef int ma_result;
typedef uint64_t ma_uint64;
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
#define MA_SUCCESS 0
#define MA_ERROR (-1)
typedef struct { ma_format format; uint32_t channels; uint32_t sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
static inline ma_decoder_config ma_decoder_config_init(ma_format f, uint32_t ch, uint32_t rate) {
	ma_decoder_config c; c.format = f; c.channels = ch; c.sampleRate = rate; return c;
}
static inline ma_result ma_decoder_init_memory(const void *d, size_t n, const ma_decoder_config *c, ma_decoder *dec) {
	(void)d; (void)n; (void)c; (void)dec; return MA_ERROR;
}
static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *dec, ma_uint64 *n) {
	(void)dec; *n = 0; return MA_ERROR;
}
static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *dec, void *out, ma_uint64 n, ma_uint64 *read) {
	(void)dec; (void)out; (void)n; *read = 0; return MA_ERROR;
}
static inline ma_result ma_decoder_uninit(ma_decoder *dec) { (void)dec; return MA_SUCCESS; }
#endif
H

flags="-O2 -march=native -I$inc"
echo "building ollama $OLLAMA_VERSION (CPU only; several CPU-minutes)..." >&2
start=$(date +%s)
GOWORK=off GOFLAGS=-mod=mod GOBIN="$work/bin" \
	CGO_ENABLED=1 CGO_CFLAGS="$flags" CGO_CXXFLAGS="$flags" \
	go install -ldflags "-X github.com/ollama/ollama/version.Version=${OLLAMA_VERSION#v}" \
	"github.com/ollama/ollama@$OLLAMA_VERSION" >&2
mv -f "$work/bin/ollama" "$bin"
echo "ollama $OLLAMA_VERSION: built in $(( $(date +%s) - start ))s -> $bin" >&2
echo "$bin"
