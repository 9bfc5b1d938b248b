// perfkit pt-synth: run a program under single-step ptrace and write the
// Intel PT recording the hardware would have produced (analysis/pt_synth.h).
#include <cerrno>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/options.h"
#include "pt_synth/pt_synth.h"

namespace perfkit::cli {

int cmd_pt_synth(int argc, char** argv) {
  CLI::App app(
      "Run a command single-stepped under ptrace and write the Intel PT trace of its user-mode\n"
      "execution as a perf.data file, as 'perf record -e intel_pt//u' would (ground truth\n"
      "for decoders; works without Intel PT hardware).",
      "pt-synth");
  std::string output = "perf.data";
  pt_synth::PtSynthOptions o;
  auto& e = o.encode;
  bool no_retcomp = false, no_tsc = false, no_fup_on_ptw = false;
  unsigned cbr = e.cbr, max_non_turbo = e.max_non_turbo_ratio;
  std::vector<std::string> command;
  app.add_option("-o,--output", output, "Output file name ('-' for a pipe-mode stream on stdout)")
      ->capture_default_str();
  app.add_option("--psb-period", e.psb_period, "Bytes of trace between PSB+ packets")
      ->capture_default_str();
  app.add_flag("--noretcomp", no_retcomp, "No return compression (a TIP for every return)");
  app.add_flag("--long-tnt", e.long_tnt, "Pack up to 47 branches in long TNT packets");
  app.add_flag("--no-tsc", no_tsc, "No TSC packets (timeless trace)");
  app.add_flag("--mtc", e.mtc, "MTC packets (and TMA with every TSC)");
  app.add_option("--mtc-period", e.mtc_period, "MTC every 2^N crystal clock ticks")
      ->capture_default_str();
  app.add_flag("--cyc", e.cyc, "CYC packets (cycle counts) before other packets");
  app.add_option("--cbr", cbr, "Core:bus ratio (CBR packets)")->capture_default_str();
  app.add_option("--max-non-turbo-ratio", max_non_turbo, "Max non-turbo ratio (AUXTRACE_INFO)")
      ->capture_default_str();
  app.add_option("--cbr-change-every", e.cbr_change_every,
                 "Change the core:bus ratio every N instructions (0: never)");
  app.add_option("--ovf-every", e.ovf_every, "Inject an overflow every N instructions (0: none)");
  app.add_option("--ovf-length", e.ovf_length, "Instructions lost in each overflow")
      ->capture_default_str();
  app.add_option("--ptwrite-every", e.ptwrite_every,
                 "Inject a PTWRITE packet every N instructions (0: none)");
  app.add_option("--pebs-every", e.pebs_every,
                 "Inject a PEBS-via-PT record (basic block: IP, counters, TSC) every N "
                 "instructions (0: none)");
  app.add_flag("--no-fup-on-ptw", no_fup_on_ptw, "PTWRITE packets without a FUP");
  app.add_option("--tsc-per-insn", e.tsc_per_insn, "TSC ticks per instruction")
      ->capture_default_str();
  app.add_option("--tsc-per-syscall", e.tsc_per_kernel_entry, "TSC ticks per kernel entry")
      ->capture_default_str();
  app.add_flag("--per-cpu", o.per_cpu, "Per-cpu AUX buffer (cpu 0) instead of per-thread");
  app.add_option("--aux-buffer-size", o.aux_buffer_size,
                 "Split the trace into AUXTRACE records of N bytes (0: one record)");
  app.add_option("--sample-every", o.sample_every,
                 "Also record cpu-clock:u samples, one every N instructions (0: none)");
  app.add_option("--max-steps", o.tracer.max_steps,
                 "Stop tracing after N instructions (of all processes)")
      ->capture_default_str();
  bool no_inherit = false;
  app.add_flag("-i,--no-inherit", no_inherit,
               "Do not follow the processes the command forks (they run untraced)");
  app.add_option("--pmu-type", o.pmu_type, "The intel_pt PMU type to record")
      ->capture_default_str();
  app.add_option("--cpuid", o.cpuid, "CPUID header feature")->capture_default_str();
  std::string vm_offset;
  app.add_option("--vm-tsc-offset", vm_offset,
                 "Trace the program as a VM guest's whose TSC is the host's plus this offset "
                 "(PIP and VMCS packets in PSB+; MTC/TMA keep host time)");
  app.add_option("--vmcs", e.vmcs, "With --vm-tsc-offset: the VMCS packets' payload")
      ->capture_default_str();
  app.add_flag("--vm-out-of-context", e.vm_out_of_context,
               "With --vm-tsc-offset: no PIP or VMCS packets");
  app.add_option("--vm-exit-every", e.vm_exit_every,
                 "With --vm-tsc-offset: a VM exit every N instructions (host PSB+ of host time)");
  app.add_option("command", command, "The command and its arguments (after --)")->required();
  int code = 0;
  if (!parse_options(app, argc, argv, code)) return code;
  if (!vm_offset.empty()) {
    // (any number strtoull reads: hex, and negative offsets as two's complement)
    char* end = nullptr;
    errno = 0;
    e.vm_tsc_offset = std::strtoull(vm_offset.c_str(), &end, 0);
    if (errno || !end || *end)
      return fail("pt-synth", make_error("--vm-tsc-offset {}: not a number", vm_offset));
    e.vm = true;
  }
  e.return_compression = !no_retcomp;
  e.tsc = !no_tsc;
  e.fup_on_ptw = !no_fup_on_ptw;
  e.cbr = static_cast<std::uint8_t>(cbr);
  e.max_non_turbo_ratio = static_cast<std::uint8_t>(max_non_turbo);
  if (!e.cbr || !e.max_non_turbo_ratio)
    return fail("pt-synth", make_error("--cbr and --max-non-turbo-ratio must be at least 1"));
  if (o.encode.mtc_period > 15)
    return fail("pt-synth", make_error("--mtc-period {} is out of range (0-15)", e.mtc_period));
  // The traced program writes to stderr so that a pipe-mode stream on stdout stays clean.
  if (output == "-") o.tracer.stdout_fd = 2;
  o.tracer.follow_forks = !no_inherit;

  auto r = pt_synth::pt_synth_run(command, o);
  if (!r) return fail("pt-synth", r.error());
  auto st = pt_synth::pt_synth_write(output, *r, o);
  if (!st) return fail("pt-synth", st.error());
  fmt::print(stderr,
             "[ perfkit pt-synth: {} instructions, {} bytes of Intel PT ({} PSB, {} overflows, "
             "{} ptwrites){}{} -> {} ]\n",
             r->trace.exec.steps.size(), r->encoded.bytes.size(), r->encoded.psbs,
             r->encoded.overflows, r->encoded.ptwrites,
             r->trace.forked.empty()
                 ? std::string()
                 : fmt::format(", {} forked process(es) traced too", r->trace.forked.size()),
             r->trace.truncated ? ", truncated" : "", output);
  return 0;
}

}  // namespace perfkit::cli
