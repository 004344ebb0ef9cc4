#!/usr/bin/env bash
# Build the one-folder bundle into dist/ambry and run its self-test offscreen.
# Prints the build time, bundle size and frozen start-up time as JSON on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

start=$(date +%s.%N)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/ambry.spec
built=$(date +%s.%N)

bundle=dist/ambry
size_mb=$(du -sm "$bundle" | cut -f1)

t0=$(date +%s.%N)
QT_QPA_PLATFORM=offscreen "$bundle/ambry" --self-test
t1=$(date +%s.%N)

if [[ "$(uname)" == "Linux" ]]; then
    install -m 644 resources/ambry.desktop "$bundle/ambry.desktop"
    for size in 16 24 32 48 64 128 256 512; do
        install -D -m 644 "resources/icons/ambry-$size.png" \
            "$bundle/icons/hicolor/${size}x${size}/apps/ambry.png"
    done
fi

python3 - "$start" "$built" "$t0" "$t1" "$size_mb" <<'PY'
import json, sys
start, built, t0, t1, size = map(float, sys.argv[1:])
print(json.dumps({"build_s": round(built - start, 1), "bundle_mb": int(size),
                  "frozen_self_test_s": round(t1 - t0, 2)}))
PY
