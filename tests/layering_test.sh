#!/usr/bin/env bash
# tests/layering_test.sh LAYERING_SH: layering.sh finds each kind of wrong
# arrow in a small tree made for the purpose, and passes the same tree once
# it is right.
set -u
check=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/low" "$work/src/mid" "$work/src/top"
echo '#include "low/a.h"' >"$work/src/mid/b.h"
echo '#include "mid/b.h"' >"$work/src/top/c.cc"
printf 'low:  | \nmid: low | \ntop:  | mid\n' >"$work/graph"
fail=0
expect() {  # expect WHAT: the check fails and names WHAT
  out=$("$check" "$work/src" "$work/graph")
  if [[ $? -eq 0 || $out != *"$1"* ]]; then
    echo "FAIL: expected an offence naming '$1', got:"; echo "$out"; fail=1
  fi
}
"$check" "$work/src" "$work/graph" || { echo "FAIL: the right tree was refused"; fail=1; }
echo '#include "top/c.h"' >>"$work/src/low/a.h"                    # runs back up
expect "low/a.h: includes top/c.h, but top is not a public dependency of low"
sed -i '$d' "$work/src/low/a.h"
printf 'low:  | \nmid:  | low\ntop:  | mid\n' >"$work/graph"     # header needs it public
expect "mid/b.h: includes low/a.h, but low is not a public dependency of mid"
printf 'low:  | top\nmid: low | \ntop:  | mid\n' >"$work/graph"  # declared upward
expect "low: depends on top, declared above it"
printf 'low:  | \nmid: low | \ntop:  | mid low\n' >"$work/graph" # declared, unused
expect "top: declares low, but no file of top includes it"
printf 'low:  | \nmid: low | \ntop:  | mid\n' >"$work/graph"
echo '#include "mid/b_impl.h"' >>"$work/src/top/c.cc"             # private header
expect "top/c.cc: includes mid/b_impl.h, private to mid"
mkdir "$work/src/stray"                                              # undeclared folder
expect "src/stray: not a module of the build"
[[ $fail -eq 0 ]] && echo "layering.sh refuses each wrong arrow"
exit $fail
