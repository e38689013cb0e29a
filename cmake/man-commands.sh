#!/usr/bin/env bash
# For help2man, a program with commands (tether): a stand-in named like the program whose
# --help leaves out the list of commands (help2man would run it together into one paragraph),
# and an include file with that list as the SYNOPSIS and each command's own help
# (`PROGRAM help COMMAND`) as a COMMANDS section, so `man tether` carries every option.
# Usage: cmake/man-commands.sh PROGRAM OUT_DIR   (writes OUT_DIR/NAME and OUT_DIR/NAME.h2m)
set -euo pipefail
program=$1 out=$2
name=$(basename "$program")
mkdir -p "$out"
cat >"$out/$name" <<WRAPPER
#!/usr/bin/env bash
if [ "\${1:-}" = --help ]; then
  "$program" --help | sed '/^commands:/,/^\$/d'
else
  exec "$program" "\$@"
fi
WRAPPER
chmod +x "$out/$name"
{
  echo "[SYNOPSIS]"
  echo ".nf"
  "$program" --help | sed -n "s/^  \($name .*\)/\1/p" | sed 's/\\/\\e/g'
  echo ".fi"
  echo "[COMMANDS]"
  "$program" --help | sed -n "s/^  $name \([a-z-]*\).*/\1/p" | sort -u | while read -r command; do
    [ "$command" = help ] && continue
    echo ".SS $command"
    echo ".nf"
    # The global options and exit statuses are the page's own sections already.
    "$program" help "$command" | sed '/^global options/,$d; s/\\/\\e/g; s/^\./\\\&./'
    echo ".fi"
  done
} >"$out/$name.h2m.tmp"
mv "$out/$name.h2m.tmp" "$out/$name.h2m"
