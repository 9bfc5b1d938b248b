// Reading a recording into a Profile: a SampleVisitor over a Session that
// keeps the samples perf script's filters keep and folds each into the
// model (its thread, its stack of frames, its event, time, cpu and period).
#pragma once

#include <span>

#include "base/error.h"
#include "profile/profile.h"
#include "session/sample_filter.h"
#include "session/session.h"

namespace perfkit::profile {

struct ProfileOptions {
  session::SampleFilterOptions filter;
  int max_stack = 127;        // --max-stack: frames of a call chain kept at most
  bool inline_frames = true;  // --inline / --no-inline (DWARF call chains)
  bool callchains = true;     // false: every stack is the sample's leaf alone
  bool source_lines = false;  // each user frame's source file and line (DWARF line tables)
  // A sample that repeats an earlier one raw (session/raw_key.h) takes the
  // stack that one resolved to; false resolves every sample (the tests
  // compare the two).
  bool reuse_repeats = true;
};

// Runs `session` (not run before) and returns its samples as a profile.
// Errors: the filter's (--time), the session's (naming the offset).
Expected<Profile> build_profile(session::Session& session, const ProfileOptions& opts);

// The same profile from several sessions of one recording read side by
// side (--jobs; opened alike, none run before): each builds a contiguous
// run of the samples, split by their times, and the runs are merged in
// order; source lines are asked in the order one session would ask them.
// One session builds it all where the recording has no sample times to
// split by. The sessions leave their shared mapping.
Expected<Profile> build_profile_shards(std::span<session::Session* const> sessions,
                                       const ProfileOptions& opts);

}  // namespace perfkit::profile
