# shellcheck shell=bash
# Writes a measured table into the documentation, between its marker comments. Source it.
#
#   doc_table_write MARKER [PAGE] <TABLE.md
#
# Replaces what lies between "<!-- BEGIN MARKER -->" and "<!-- END MARKER -->" in PAGE
# (default: docs/performance.md of this repository) with a blank line, the Markdown read on
# standard input (leading and trailing blank lines dropped), a blank line, the line
# "Measured by `SCRIPT` on CPU (N cores, Linux KERNEL), YYYY-MM-DD." (SCRIPT: MARKER up to
# its first ':') and a blank line. The page is rewritten atomically (a temporary file beside
# it, then mv). Returns 1 with a message naming the marker and the page if the pair is
# missing, repeated or out of order, or if the table is empty; the page is then untouched.

# Takes --write-docs out of a script's arguments: sets write_docs (1 when given, else 0) and
# doc_table_args (the rest, in order), for `set -- "${doc_table_args[@]}"`.
doc_table_take_flag() {
  write_docs=0
  doc_table_args=()
  local arg
  for arg in "$@"; do
    if [ "$arg" = --write-docs ]; then write_docs=1; else doc_table_args+=("$arg"); fi
  done
}

DOC_TABLE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

doc_table_write() (
  set -euo pipefail
  marker=${1:?usage: doc_table_write MARKER [PAGE] <TABLE.md}
  page=${2:-$DOC_TABLE_ROOT/docs/performance.md}
  fail() { echo "doc_table_write: $* (marker '$marker', page $page)" >&2; exit 1; }
  [ -f "$page" ] || fail "no such page"
  table=$(mktemp)
  tmp=$(mktemp "$(dirname "$page")/.doc-table.XXXXXX")
  trap 'rm -f "$table" "$tmp"' EXIT
  cat >"$table"
  grep -q '[^[:space:]]' "$table" || fail "the table on standard input is empty"
  cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
  note="Measured by \`${marker%%:*}\` on ${cpu:-$(uname -m)} ($(nproc) cores, Linux $(uname -r)), $(date -u +%Y-%m-%d)."
  BEGIN_LINE="<!-- BEGIN $marker -->" END_LINE="<!-- END $marker -->" NOTE=$note \
    awk -v table="$table" '
      BEGIN { while ((getline line < table) > 0) t[++n] = line
              first = 1; while (first <= n && t[first] ~ /^[[:space:]]*$/) first++
              while (n >= first && t[n] ~ /^[[:space:]]*$/) n-- }
      $0 == ENVIRON["BEGIN_LINE"] { if (begins++ || ends) bad = 1
        print; print ""; for (i = first; i <= n; i++) print t[i]
        print ""; print ENVIRON["NOTE"]; print ""; inside = 1; next }
      $0 == ENVIRON["END_LINE"] { if (ends++ || !inside) bad = 1; inside = 0 }
      !inside { print }
      END { exit (bad || begins != 1 || ends != 1) ? 3 : 0 }' "$page" >"$tmp" ||
    fail "the marker pair is missing, repeated or out of order"
  chmod --reference="$page" "$tmp"
  mv "$tmp" "$page"
  echo "doc_table_write: wrote the table '$marker' into $page"
)
