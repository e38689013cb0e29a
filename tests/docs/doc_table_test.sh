#!/usr/bin/env bash
# deploy/lib/doc-table.sh's doc_table_write, on a temporary copy of a page (default: the
# source tree's docs/performance.md; the page itself is never written):
#   * every marker pair in the page can be written (BEGIN and END once each, in order);
#   * writing one replaces exactly the text between its markers with a blank line, the table,
#     a blank line, the "Measured by `SCRIPT` on ..., DATE." line and a blank line, and leaves
#     every other byte of the page as it was; writing it again gives the same page;
#   * a missing marker and an empty table fail (non-zero, a message naming the marker and the
#     page) and leave the page untouched, with no temporary file behind.
#
# Usage: bash tests/docs/doc_table_test.sh [PAGE.md]
# Exit status 0 if every check passes, 1 otherwise (each failure printed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source_page=${1:-$root/docs/performance.md}
# shellcheck source=SCRIPTDIR/../../deploy/lib/doc-table.sh
source "$root/deploy/lib/doc-table.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
line_of() { grep -n -x -F "$1" "$2" | head -1 | cut -d: -f1; }

mkdir "$work/docs"
copy=$work/docs/page.md
cp "$source_page" "$copy"
cp "$copy" "$work/original.md"
mapfile -t markers < <(sed -n 's/^<!-- BEGIN \(.*\) -->$/\1/p' "$copy")
[ ${#markers[@]} -gt 0 ] || fail "no BEGIN marker in $source_page"

# Every pair in the page is well formed: a write succeeds (on a scratch copy each time).
for m in "${markers[@]}"; do
  cp "$work/original.md" "$work/scratch.md"
  echo "| x |" | doc_table_write "$m" "$work/scratch.md" >/dev/null 2>"$work/err" ||
    fail "marker '$m': $(cat "$work/err")"
done

# One table replaced; everything around it byte-identical.
marker=${markers[0]}
begin="<!-- BEGIN $marker -->"
end="<!-- END $marker -->"
printf '\n| a | b |\n|---|---:|\n| 1 | 2.5 µs |\n\n\n' >"$work/table.md"
doc_table_write "$marker" "$copy" <"$work/table.md" >/dev/null || fail "writing '$marker' failed"
b=$(line_of "$begin" "$copy")
e=$(line_of "$end" "$copy")
b0=$(line_of "$begin" "$work/original.md")
e0=$(line_of "$end" "$work/original.md")
note=$(sed -n "$((b + 6))p" "$copy")
[[ $note =~ ^Measured\ by\ \`${marker%%:*}\`\ on\ .+\ \([0-9]+\ cores,\ Linux\ .+\),\ [0-9]{4}-[0-9]{2}-[0-9]{2}\.$ ]] ||
  fail "the line after the table is not 'Measured by \`${marker%%:*}\` on CPU (N cores, Linux KERNEL), DATE.': '$note'"
{
  head -n "$b0" "$work/original.md"
  printf '\n| a | b |\n|---|---:|\n| 1 | 2.5 µs |\n\n%s\n\n' "$note"
  tail -n "+$e0" "$work/original.md"
} >"$work/expected.md"
cmp -s "$work/expected.md" "$copy" ||
  fail "the page is not the original with only '$marker' replaced: $(diff "$work/expected.md" "$copy" | head -20)"
[ "$((e - b))" = 8 ] || fail "expected 7 lines between the markers, found $((e - b - 1))"
cp "$copy" "$work/once.md"
doc_table_write "$marker" "$copy" <"$work/table.md" >/dev/null || fail "writing '$marker' again failed"
cmp -s "$work/once.md" "$copy" || fail "writing the same table twice changed the page"

# A missing marker and an empty table fail loudly and change nothing.
cp "$copy" "$work/before.md"
if echo "| x |" | doc_table_write no-such-script.sh "$copy" >/dev/null 2>"$work/err"; then
  fail "a missing marker did not fail"
fi
if ! grep -q -F "no-such-script.sh" "$work/err" || ! grep -q -F "$copy" "$work/err"; then
  fail "the missing marker's message does not name the marker and the page: $(cat "$work/err")"
fi
if doc_table_write "$marker" "$copy" </dev/null >/dev/null 2>"$work/err"; then
  fail "an empty table did not fail"
fi
grep -q -F "$marker" "$work/err" || fail "the empty table's message does not name the marker"
# An END without its BEGIN fails too.
grep -v -x -F "$begin" "$copy" >"$work/no-begin.md"
if echo "| x |" | doc_table_write "$marker" "$work/no-begin.md" >/dev/null 2>&1; then
  fail "an END without its BEGIN did not fail"
fi
cmp -s "$work/before.md" "$copy" || fail "a failed write changed the page"
leftovers=$(find "$work/docs" -name '.doc-table.*' | wc -l)
[ "$leftovers" = 0 ] || fail "$leftovers temporary files left beside the page"

if [ "$failures" -gt 0 ]; then
  echo "doc_table_test: $failures check(s) failed"
  exit 1
fi
echo "doc_table_test: ${#markers[@]} marker pairs in $source_page; every check passed"
