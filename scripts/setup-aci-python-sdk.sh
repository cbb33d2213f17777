#!/usr/bin/env bash
# Installs the official ACI Python SDK (from ../shared/vendor/aci-python-sdk) and pytest into
# .venv-aci-sdk/, for the SDK compatibility tier (test/e2e/aci-sdk). Idempotent: a stamp file
# records what was installed.
#
# The SDK asks for `griffe>=1.7.2`; the package index here carries that library under its newer
# name `griffelib` (same `griffe` import), so the SDK is installed without its declared
# dependencies, and those are installed by name.
set -euo pipefail
cd "$(dirname "$0")/.."
sdk=${ACI_SDK_DIR:-../shared/vendor/aci-python-sdk}
venv=.venv-aci-sdk
if [[ ! -f $sdk/pyproject.toml ]]; then
  echo "setup-aci-python-sdk: no SDK at $sdk" >&2
  exit 2
fi
stamp="$venv/.patchbay-stamp"
want="$(sha256sum "$sdk/pyproject.toml" | cut -c1-16) $(python3 --version 2>&1)"
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
# --retries 0: an index that cannot be reached is skipped at once for the next one configured.
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 --timeout 20)
"${pip[@]}" 'httpx>=0.27.2' 'tenacity>=8.2.3' 'pydantic>=2.11.3' 'typing-extensions>=4.13.2' 'pytest>=8' \
  griffelib 2> >(grep -v '^WARNING: ' >&2)
"${pip[@]}" --no-deps "$sdk"
"$venv/bin/python" -c 'import aci, griffe, pytest'
echo "$want" >"$stamp"
echo "ACI Python SDK installed in $venv"
