// The Intel PT packet dump behind `perfkit dump` (perf report -D): after each
// PERF_RECORD_AUXTRACE of an intel_pt recording, a "." line, the ". ... Intel
// Processor Trace data: size N bytes" line and one line per packet, exactly
// as perf prints them (intelpt/packet_dump.h).
#pragma once

#include "dump/dump_records.h"

namespace perfkit::dump {

// The dumper to put in RecordPrinterOptions::auxtrace_dump. It prints
// nothing for AUX data of other types (perf prints nothing either).
AuxtraceDumper intel_pt_auxtrace_dumper();

}  // namespace perfkit::dump
