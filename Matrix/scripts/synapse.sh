#!/usr/bin/env bash
# Synapse, the reference Matrix homeserver, for ChatSyncMatrix's tests and demo.
#
#   scripts/synapse.sh install           installs Synapse from PyPI into Matrix/.synapse/venv
#   scripts/synapse.sh config DIR PORT   writes DIR/homeserver.yaml: SQLite, loopback PORT,
#                                        registration by shared secret, test rate limits
#
# The tests call `config` and start the server themselves (Tests/ChatSyncMatrixTests).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="$here/.synapse/venv"
version="1.163.2"

case "${1:-}" in
install)
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import synapse" 2>/dev/null; then
        echo "Synapse is installed in $venv"
        exit 0
    fi
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet "matrix-synapse==$version"
    echo "Synapse $version installed in $venv"
    ;;
config)
    dir="${2:?config DIR PORT}"
    port="${3:?config DIR PORT}"
    mkdir -p "$dir"
    "$venv/bin/python" -m synapse.app.homeserver --server-name localhost --config-path "$dir/homeserver.yaml" \
        --generate-config --report-stats=no --data-directory "$dir" > /dev/null
    python3 - "$dir/homeserver.yaml" "$port" <<'PY'
import re, sys
path, port = sys.argv[1], sys.argv[2]
text = open(path).read()
# One loopback listener on the chosen port, client API only.
text = re.sub(r"listeners:.*?(?=\ndatabase:)", f"""listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false""", text, flags=re.S)
text = re.sub(r"trusted_key_servers:.*", "", text, flags=re.S)
limit = "{per_second: 100000, burst_count: 1000000}"
text += f"""
trusted_key_servers: []
suppress_key_server_warning: true
enable_registration: false
presence:
  enabled: false
rc_message: {limit}
rc_registration: {limit}
rc_login:
  address: {limit}
  account: {limit}
  failed_attempts: {limit}
rc_joins:
  local: {limit}
  remote: {limit}
rc_invites:
  per_room: {limit}
  per_user: {limit}
  per_issuer: {limit}
rc_admin_redaction: {limit}
"""
open(path, "w").write(text)
PY
    # Quiet logs: warnings only, to a file in DIR.
    sed -i 's/level: INFO/level: WARNING/g' "$dir/localhost.log.config"
    echo "$dir/homeserver.yaml"
    ;;
*)
    echo "usage: $0 install | config DIR PORT" >&2
    exit 2
    ;;
esac
