#!/usr/bin/env bash
# The build-machine half of `dynqual qualify --device hip` on a GPU machine without MLIR
# (docs/commands/qualify.md, "Devices on another machine"). From the repository root:
#   scripts/gpu-qualify-prepare.sh [SUITE...]     (default: corpus ../shared/models)
# Writes .dev/gpu (ignored by git, carried to the GPU machine):
#   plan/        `dynqual qualify SUITE... --device hip --prepare`: artifacts, .npy inputs, manifest
#   googletest/  Debian's GoogleTest sources (the GPU machine has none)
#   benchmark/   Google Benchmark sources from Debian's source package (Debian ships no sources)
# Extra qualify flags (e.g. --reps 50) go in DYNQUAL_QUALIFY_ARGS; DYNQUAL names the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
DYNQUAL=${DYNQUAL:-build/tools/dynqual/dynqual}
GPU=.dev/gpu
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(corpus ../shared/models)
rm -rf "$GPU"
mkdir -p "$GPU"
# shellcheck disable=SC2086
"$DYNQUAL" qualify "${suites[@]}" --device hip --prepare "$GPU/plan" ${DYNQUAL_QUALIFY_ARGS:-}

cp -r /usr/src/googletest "$GPU/googletest"

# Debian's own source lists, turned into deb-src entries in a private apt state folder.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/parts" "$tmp/lists/partial"
for f in /etc/apt/sources.list.d/*.sources; do
  grep -q "debian-archive-keyring" "$f" && sed 's/^Types: deb$/Types: deb-src/' "$f" > "$tmp/parts/$(basename "$f")"
done
apt_o=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$tmp/parts" -o "Dir::State::Lists=$tmp/lists"
       -o "APT::Sandbox::User=$(id -un)")
apt-get "${apt_o[@]}" update -qq > /dev/null
(cd "$tmp" && apt-get "${apt_o[@]}" source --download-only -qq benchmark > /dev/null 2>&1)
tar xzf "$tmp"/benchmark_*.orig.tar.gz -C "$tmp"
mkdir -p "$GPU/benchmark"
src=$(find "$tmp" -maxdepth 1 -type d -name 'benchmark-*' | head -1)
cp -r "$src"/CMakeLists.txt "$src"/cmake "$src"/include "$src"/src "$GPU/benchmark/"

echo "$GPU: $(du -sh "$GPU" | cut -f1) to carry (the limit is 64 MiB with the working tree)"
echo "on the GPU machine, from the repository root: scripts/gpu-qualify.sh $GPU \$OUT"
echo "then here: tar xzf hipq-results.tar.gz -C $GPU && $DYNQUAL qualify --import-device-results $GPU/hipq-results"
