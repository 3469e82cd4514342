#!/usr/bin/env bash
# The quick start: installs what is missing (Debian 12 packages), builds, then runs one job.
#   ./pacheck.sh report   the main job: the property suite over every available variant, writing the reports
#   ./pacheck.sh test     build and run the ctest suite
set -euo pipefail
cd "$(dirname "$0")"

packages=(cmake ninja-build g++ librapidcheck-dev libgtest-dev nlohmann-json3-dev libcli11-dev libpng-dev)

install_missing() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "pacheck: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

# nvcc is often installed outside PATH; the CUDA variants are built whenever it is found.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

build() {
  install_missing "${packages[@]}"
  cmake --preset default >/dev/null
  cmake --build --preset default
}

case "${1:-}" in
  report)
    build
    shift
    # Writes pacheck-report/index.html and ulp.json and prints where they are; later options win.
    ./build/default/cli/pacheck report --out pacheck-report "$@"
    ;;
  test)
    install_missing chromium  # the report_render_test renders the report page in headless Chromium
    build
    ctest --preset default
    ;;
  *)
    echo "usage: $0 report|test" >&2
    exit 2
    ;;
esac
