#!/usr/bin/env bash
# The project's speed as a ratio to ns-3, measured in one run on this machine: ns-3 3.44 runs
# leafspine_udp.cc (4 leaves x 4 spines x 8 hosts, 100G links of 1 us, host i sends 40 Gb/s of
# 1,000-byte UDP payloads to host (i + 8) mod 32 for 1 ms), then `asic bench ns3-twin` runs the
# same workload on tofino1-like chips (src/perf.rs, `ns3_twin_net`). Both rates count switch-hops
# (a packet through one switch) per wall second of the simulation loop alone. Machines here are
# shared: compare the ratio, not the rates.
#
# ns-3 is not compiled: the program is built once against the libraries and headers of the `ns3`
# wheel from PyPI (`pip download --no-deps ns3`), cached in ~/.cache/ns3-twin.
#
# Run from the project's root: tools/ns3/side-by-side.sh [ASIC BENCH ARGS...]
# (ASIC=path/to/asic chooses the binary; the default is target/release/asic).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
W=${XDG_CACHE_HOME:-$HOME/.cache}/ns3-twin
if [ ! -x "$W/leafspine" ] || [ "$here/leafspine_udp.cc" -nt "$W/leafspine" ]; then
  mkdir -p "$W" && cd "$W"
  ls ns3-*.whl >/dev/null 2>&1 || pip download --no-deps ns3 -d . -q
  [ -d x ] || python3 -m zipfile -e ns3-*.whl x
  N=$W/x/ns3
  g++ -O2 -std=c++20 -I"$N/include" "$here/leafspine_udp.cc" -o leafspine -L"$N/lib64" \
    -lns3.44-core -lns3.44-network -lns3.44-internet -lns3.44-point-to-point \
    -lns3.44-applications -lns3.44-traffic-control -Wl,-rpath,"$N/lib64"
  cd - >/dev/null
fi
bin=${ASIC:-target/release/asic}
ns=$("$W/leafspine" --simMs=1 --load=0.4 | grep -oE 'hops_per_s=[0-9]+' | cut -d= -f2)
line=$("$bin" bench ns3-twin "$@" | grep '^ns3-twin')
asic=$(echo "$line" | awk '{print $3}')
hops=$(echo "$line" | awk '{print $2}')
wall=$(echo "$line" | awk '{print $4}')
python3 - "$ns" "$asic" "$hops" "$wall" <<'PY'
import sys
ns, asic, hops, wall = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"ns-3 {ns:,.0f} hops/s; asic {asic:,.0f} hops/s ({hops:,} hops in {wall:.2f} s); ratio {asic / ns:.1f}x")
PY
