#!/usr/bin/env bash
# System packages the local testbed needs (Debian/Ubuntu). Skips apt when all are present, and
# (with a warning) when not root: the simulator does not need them.
set -euo pipefail
need=()
command -v ip >/dev/null       || need+=(iproute2)
command -v tc >/dev/null       || need+=(iproute2)
command -v iptables >/dev/null || need+=(iptables)
command -v ping >/dev/null     || need+=(iputils-ping)
command -v sysctl >/dev/null   || need+=(procps)
command -v prometheus >/dev/null || need+=(prometheus)
ldconfig -p 2>/dev/null | grep -q libnetfilter_queue.so.1 || need+=(libnetfilter-queue1)
command -v chromium >/dev/null || need+=(chromium)  # the reports are checked as a browser renders them
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    # the simulator, training and evaluate need none of them; the local testbed needs all
    echo "warning: not root, not installing ${need[*]}: the local testbed needs them (run 'make setup' as root)" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi
