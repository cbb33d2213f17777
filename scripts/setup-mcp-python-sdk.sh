#!/usr/bin/env bash
# Installs the official Python MCP SDK (`mcp`, pinned) into .venv-mcp-sdk/, for the MCP e2e test
# that drives /v1/mcp with it in both protocol revisions (test/e2e/mcp/mcp-python.e2e-spec.ts).
# Idempotent: a stamp file records what was installed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-mcp-sdk
want="mcp==2.3.0 $(python3 --version 2>&1)"
stamp="$venv/.patchbay-stamp"
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
# --retries 0: an index that cannot be reached is skipped at once for the next one configured.
"$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 --timeout 20 'mcp==2.3.0' \
  2> >(grep -v '^WARNING: ' >&2)
"$venv/bin/python" -c 'import mcp, httpx2'
echo "$want" >"$stamp"
echo "Python MCP SDK installed in $venv"
