#!/usr/bin/env bash
# tests/layering.sh SRC MODULE_DEPS
# Holds every #include under SRC against the module graph the build declares
# (MODULE_DEPS, written by cmake/modules.cmake: "name: public deps | private
# deps", bottom up). Prints each offence and exits 1 when there is one:
# - a folder of SRC that is not a declared module;
# - a dependency on a module declared later (an arrow that runs back up);
# - an include of a module that is not the file's own nor a declared
#   dependency (for a header: a public one, since its includers see it);
# - a declared dependency that no file of the module includes;
# - a *_impl.h header included from outside its own module.
set -u
src=$1
graph=$2
[[ -d $src && -f $graph ]] || { echo "usage: layering.sh SRC MODULE_DEPS"; exit 2; }

declare -A pub priv rank
n=0
while IFS= read -r line; do
  [[ -z $line ]] && continue
  name=${line%%:*}
  rest=${line#*:}
  pub[$name]=" $(echo ${rest%%|*}) "
  priv[$name]=" $(echo ${rest#*|}) "
  rank[$name]=$((n++))
done <"$graph"

bad=0
offence() { echo "$*"; bad=1; }

for mod in "${!rank[@]}"; do
  for dep in ${pub[$mod]} ${priv[$mod]}; do
    [[ -n ${rank[$dep]:-} ]] || { offence "$mod: depends on $dep, which is no module"; continue; }
    ((rank[$dep] < rank[$mod])) || offence "$mod: depends on $dep, declared above it"
  done
done

for dir in "$src"/*/; do
  mod=$(basename "$dir")
  [[ -n ${rank[$mod]:-} ]] || { offence "src/$mod: not a module of the build (cmake/modules.cmake)"; continue; }
  declare -A used=()
  while IFS=: read -r file inc; do
    target=${inc%%/*}
    header=${inc#*/}
    [[ $target == "$mod" ]] && continue
    used[$target]=1
    rel=${file#"$src"/}
    if [[ $header == *_impl.h ]]; then
      offence "$rel: includes $inc, private to $target"
    elif [[ $file == *.h ]]; then
      [[ ${pub[$mod]} == *" $target "* ]] ||
        offence "$rel: includes $inc, but $target is not a public dependency of $mod"
    else
      [[ "${pub[$mod]}${priv[$mod]}" == *" $target "* ]] ||
        offence "$rel: includes $inc, but $target is not a dependency of $mod"
    fi
  done < <(grep -rHoE '^\s*#\s*include "[a-z_]+/[A-Za-z0-9_./]+"' "$dir" |
           sed -E 's/:\s*#\s*include "/:/; s/"$//')
  for dep in ${pub[$mod]} ${priv[$mod]}; do
    [[ -n ${used[$dep]:-} ]] || offence "$mod: declares $dep, but no file of $mod includes it"
  done
  unset used
done
exit $bad
