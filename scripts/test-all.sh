#!/usr/bin/env bash
# Runs every test of every package, the way CI does. Usage: bash scripts/test-all.sh
# Fails on a failing test, a compiler warning in our own code, or a lint finding.
set -euo pipefail
cd "$(dirname "$0")/.."

# GRDB links the system SQLite; Debian calls its headers libsqlite3-dev.
if ! dpkg -s libsqlite3-dev >/dev/null 2>&1; then
    echo "== installing libsqlite3-dev"
    apt-get update -qq && apt-get install -y -qq libsqlite3-dev
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Runs `swift test` with the given arguments into the log, keeping the terminal to what
# a reader needs: each failing test, the run's test count and its time. On a failure it
# ends with the last lines of the output and a digest of the recorded issues, each with
# the seed that replays it. The full output of every stage stays in .build/ci-logs/.
mkdir -p .build/ci-logs
stage=0
keep_log() {
    stage=$((stage + 1))
    cp "$log" ".build/ci-logs/$(printf '%02d' "$stage")-$1.log"
}
run_tests() {
    local start=$SECONDS status=0
    swift test "$@" > "$log" 2>&1 || status=$?
    keep_log "swift-test"
    grep -E "✘" "$log" | cut -c1-300 | head -40 || true
    if [ "$status" -ne 0 ]; then
        echo "== FAILED: swift test $* — the last 60 lines of its output, then the recorded issues"
        tail -60 "$log" | cut -c1-500
        echo "== the recorded issues (at most 40 lines, each cut at 500 characters)"
        { grep -E "recorded an issue|↳ .*(seed|SEED)" "$log" || echo "no recorded issues: a build error or a crash (above)"; } \
            | cut -c1-500 | head -40 || true
        exit 1
    fi
    local summary
    summary=$(grep -E "Test run with [0-9]+ tests?" "$log" | tail -1 | sed -E 's/.*(Test run with [0-9]+ tests? in [0-9]+ suites? [a-z]+ after [0-9.]+ seconds).*/\1/')
    echo "   ${summary:-no Swift Testing summary}; $((SECONDS - start)) s in all"
}

# Builds quietly into the log: the terminal gets the warnings and errors, and the tail
# of the output when the build fails.
run_build() {
    local start=$SECONDS status=0
    swift build "$@" > "$log" 2>&1 || status=$?
    keep_log "swift-build"
    grep -E "(warning|error):" "$log" | grep -v '/\.build' | cut -c1-300 | head -60 || true
    if [ "$status" -ne 0 ]; then
        tail -40 "$log"
        echo "== FAILED: swift build $*"
        exit 1
    fi
    echo "   built in $((SECONDS - start)) s"
}

# Builds and tests one package; any warning from our own sources fails the run.
check_package() {
    local dir=$1; shift
    echo "== $dir: swift build --build-tests"
    run_build --package-path "$dir" --build-tests "$@"
    if grep -E '^/[^ ]*\.swift:[0-9]+:[0-9]+: warning:' "$log" | grep -v '/\.build' | grep -q .; then
        echo "FAIL: compiler warnings in $dir (listed above)"
        exit 1
    fi
    echo "== $dir: swift test"
    run_tests --package-path "$dir" "$@"
}

echo "== README examples match the compiled ones"
python3 scripts/check-readme.py

echo "== swift format lint --strict"
swift format lint --strict -r Sources Tests Package.swift Samples/Sources Samples/Tests Samples/Package.swift \
    Benchmarks/Sources Benchmarks/Package.swift Matrix/Sources Matrix/Tests Matrix/Package.swift

# The root suite runs under ThreadSanitizer below. On Linux, Synchronization's `Mutex`
# hands a contended lock over through a futex the Sanitizer cannot follow, so its guarded
# accesses are reported as races whenever two threads happen to meet in it (three times
# so far: the test clock, the event inbox, the checkpointer). LockedState (a pthread
# mutex) is what the root package uses instead.
echo "== no Synchronization.Mutex where ThreadSanitizer runs"
# Any use in code (a declaration, `Mutex.init`, a type alias), not the word in a comment;
# grep's own failure (status 2) fails the step too, rather than passing as "no match".
status=0
grep -rnE --include='*.swift' '^[^/]*\bMutex\b' Sources Tests || status=$?
if [ "$status" -eq 0 ]; then
    echo "FAIL: use LockedState (Sources/ChatSync/Sync/LockedState.swift) instead of Mutex (above)"
    exit 1
elif [ "$status" -ne 1 ]; then
    echo "FAIL: the Mutex check could not read Sources and Tests"
    exit 1
fi

check_package .

# The DocC catalogs (articles and every public symbol's comment); a broken link, a
# missing parameter or an ambiguous reference fails CI.
echo "== documentation: swift package generate-documentation --warnings-as-errors"
swift package --disable-sandbox generate-documentation --target ChatSync --target ChatSyncTesting --warnings-as-errors

# The root suite again under ThreadSanitizer and AddressSanitizer, each in a build folder
# of its own; any report fails. The seeded generators run fewer seeds there: a sanitizer
# looks for races and memory errors in the code the tests walk, which a few dozen
# schedules of each generator cover, while the plain run above searches the schedules
# with the full counts. The sanitizers are about four times slower, and at the full counts
# each run took about 16 of CI's 90 minutes (a landed run took 86 minutes in all). On
# 2026-12-02 a landed run took 80 minutes again, so the cache-read and sender-identity
# generators (at their full counts there until then, about 9 minutes of CPU each under a
# sanitizer) run 40 seeds in both, and AddressSanitizer runs each generator at a quarter
# of ThreadSanitizer's counts: our Swift code can corrupt memory only through its few
# unsafe pointers (the store's statements) and SQLite's C code, which every schedule
# walks alike, while races hang on the interleavings that more schedules try.
echo "== .: swift test --sanitize=thread"
SOAK_SEEDS=80 HOSTILE_SEEDS=60 MODEL_SEEDS=60 FRESH_VIEWS_SEEDS=40 SPARSE_SCROLL_SEEDS=40 CLOSE_MID_WORK_SEEDS=40 CHANNEL_LIST_SEEDS=40 CHANNEL_GONE_SEEDS=40 CACHE_READS_SEEDS=40 SENDER_IDENTITY_SEEDS=40 BUSY_RETRIES_SEEDS=20 AUTOMATIC_RESENDS_SEEDS=20 \
    run_tests --sanitize=thread --scratch-path .build-tsan
if grep -q "WARNING: ThreadSanitizer" "$log"; then
    grep -A40 "WARNING: ThreadSanitizer" "$log" | head -200
    echo "FAIL: ThreadSanitizer reports (above)"
    exit 1
fi
# Memory errors only: LeakSanitizer also reports what XCTest and suspended tasks hold at exit.
echo "== .: swift test --sanitize=address"
ASAN_OPTIONS=detect_leaks=0 SOAK_SEEDS=20 HOSTILE_SEEDS=15 MODEL_SEEDS=15 FRESH_VIEWS_SEEDS=10 SPARSE_SCROLL_SEEDS=10 CLOSE_MID_WORK_SEEDS=10 CHANNEL_LIST_SEEDS=10 CHANNEL_GONE_SEEDS=10 CACHE_READS_SEEDS=10 SENDER_IDENTITY_SEEDS=10 BUSY_RETRIES_SEEDS=5 AUTOMATIC_RESENDS_SEEDS=5 PASS_SCHEDULE_SEEDS=500 \
    run_tests --sanitize=address --scratch-path .build-asan
if grep -q "ERROR: AddressSanitizer" "$log"; then
    grep -A40 "ERROR: AddressSanitizer" "$log" | head -200
    echo "FAIL: AddressSanitizer reports (above)"
    exit 1
fi

check_package Samples

echo "== Benchmarks: release build and a quick run (figures are printed, not asserted)"
run_build -c release --package-path Benchmarks
if grep -E '^/[^ ]*\.swift:[0-9]+:[0-9]+: warning:' "$log" | grep -v '/\.build' | grep -q .; then
    echo "FAIL: compiler warnings in Benchmarks"
    exit 1
fi
swift run -c release --package-path Benchmarks chatsync-bench --quick

echo "== the demo runs to the end"
swift run --package-path Samples chat-demo > "$log" 2>&1 || { cat "$log"; echo "FAIL: chat-demo"; exit 1; }
grep -q "^Done in" "$log" || { cat "$log"; echo "FAIL: chat-demo did not finish its story"; exit 1; }
tail -3 "$log"

# ChatSyncMatrix against a real Synapse on loopback: the script installs Synapse from
# PyPI into a git-ignored virtual environment; the tests start and stop their servers.
echo "== Matrix: Synapse from PyPI"
bash Matrix/scripts/synapse.sh install
check_package Matrix

echo "== Matrix: the demo runs to the end against its own Synapse"
swift run --package-path Matrix matrix-demo > "$log" 2>&1 || { cat "$log"; echo "FAIL: matrix-demo"; exit 1; }
grep -q "^Done$" "$log" || { cat "$log"; echo "FAIL: matrix-demo did not finish its story"; exit 1; }
tail -3 "$log"
