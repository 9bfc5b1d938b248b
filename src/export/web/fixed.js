// printf's "%.Nf" in JavaScript, written before each page's script. A value
// exactly halfway between two N-digit decimals (36.625 is 293/8, a double)
// is rounded by toFixed away from zero and by printf (glibc, so perf and
// FlameGraph's Perl) to the even digit: the pages would show 36.63% where
// perf shows 36.62%. The tie is found in the value's exact decimal expansion
// (toFixed(100) is exact for every |x| above 1e-15; below, no tie can round
// to a nonzero digit within the few digits the pages ask for).
function pkFixed(x, digits) {
  const s = x.toFixed(digits);
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return s;
  const exact = Math.abs(x).toFixed(100);
  const dot = exact.indexOf('.');
  if (!/^50*$/.test(exact.slice(dot + 1 + digits))) return s;
  const cut = exact.slice(0, digits ? dot + 1 + digits : dot);
  if (Number(cut[cut.length - 1]) % 2 !== 0) return s;  // away from zero is the even digit
  return (x < 0 ? '-' : '') + cut;
}
