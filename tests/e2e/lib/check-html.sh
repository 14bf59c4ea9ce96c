#!/usr/bin/env bash
# check-html.sh PAGE NFAIL: (host side) render a matrix HTML page in headless Chromium and check it:
# the script ran, both heatmaps are there, NFAIL failures are listed. Exit 0 ok, 1 bad, 77 no chromium.
set -uo pipefail
RP_ROOT=${RP_ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)} RP_BIN=${RP_BIN:-} RP_RESULTS=${RP_RESULTS:-/tmp}
. "$(dirname "$0")/matrix.sh"
mx_html_check "$1" "$2"
rc=$?
[ $rc -eq 0 ] && echo "PASS: $1 renders with $2 failures listed"
exit $rc
