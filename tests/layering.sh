#!/usr/bin/env bash
# Checks that each module includes only headers of the modules below it
# (docs: ARCHITECTURE.md). Prints every include that points the wrong way.
set -u
src=$1
declare -A allowed=(
  [base]="base"
  [abi]="abi base"
  [record]="record abi base"
  [perfdata]="perfdata record abi base"
  [capture]="capture perfdata record abi base"
  [elf]="elf base"
  [dwarf]="dwarf elf base"
  [symbol]="symbol dwarf elf base"
  [machine]="machine symbol dwarf elf record abi base"
  [intelpt]="intelpt elf record abi base"
  [analysis]="analysis capture perfdata machine symbol dwarf elf intelpt record abi base"
  [export]="export analysis perfdata machine symbol dwarf elf intelpt record abi base"
  [cli]="cli analysis export capture perfdata machine symbol dwarf elf intelpt record abi base"
)
bad=0
for dir in "$src"/*/; do
  mod=$(basename "$dir")
  ok=${allowed[$mod]:-}
  if [[ -z $ok ]]; then echo "unknown module $mod: add it to tests/layering.sh"; bad=1; continue; fi
  while IFS=: read -r file line; do
    inc=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$line")
    [[ " $ok " == *" $inc "* ]] || { echo "$file: includes $inc/ (not below $mod)"; bad=1; }
  done < <(grep -rHE '^#include "[a-z_]+/' "$dir" | sed -E 's/:(#include)/:\1/')
done
exit $bad
