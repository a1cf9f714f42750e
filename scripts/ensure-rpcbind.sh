#!/usr/bin/env bash
# Starts the system rpcbind when it is installed but not running (containers, fresh
# machines without systemd), so that clients find MOUNT without being told its port.
set -u
if (exec 3<>/dev/tcp/127.0.0.1/111) 2>/dev/null; then exit 0; fi
if ! command -v rpcbind >/dev/null 2>&1; then
  echo "rpcbind is not installed: clients must name the ports (port=, mountport=)" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "rpcbind is not running and starting it needs root: clients must name the ports" >&2
  exit 0
fi
if command -v systemctl >/dev/null 2>&1 && systemctl start rpcbind 2>/dev/null; then exit 0; fi
echo "starting rpcbind"
rpcbind || echo "could not start rpcbind: clients must name the ports" >&2
exit 0
