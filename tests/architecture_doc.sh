#!/usr/bin/env bash
# tests/architecture_doc.sh DOC MODULE_DEPS: the module table of
# docs/architecture.md ("| name | what | public deps | private deps |") names
# every module the build declares, with the same dependencies.
set -u
doc=$1
graph=$2
bad=0
sorted() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort | tr '\n' ' '; }
while IFS= read -r line; do
  [[ -z $line ]] && continue
  name=${line%%:*}
  rest=${line#*:}
  pub=$(sorted "${rest%%|*}")
  priv=$(sorted "${rest#*|}")
  row=$(grep -E "^\| $name \|" "$doc" | head -1)
  if [[ -z $row ]]; then echo "$doc: no row for module $name"; bad=1; continue; fi
  IFS='|' read -r _ _ _ dpub dpriv _ <<<"$row"
  [[ $name == cli ]] && continue  # "everything it runs"
  [[ $(sorted "$dpub") == "$pub" ]] ||
    { echo "$doc: $name's public deps are '$(sorted "$dpub")', the build says '$pub'"; bad=1; }
  [[ $(sorted "$dpriv") == "$priv" ]] ||
    { echo "$doc: $name's private deps are '$(sorted "$dpriv")', the build says '$priv'"; bad=1; }
done <"$graph"
exit $bad
