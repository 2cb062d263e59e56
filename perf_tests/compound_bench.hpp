// spk-bench's benchmark of matrices with compound entries (perf_tests/compound_bench.cpp).
#pragma once

#include <string>

namespace spk_bench {

/// True when the command line asks for the compound benchmark: --scalar names a quaternion or
/// block type, or --format mentions "compound".
bool wants_compound(int argc, char** argv);

/// The compound benchmark's main (parses its own options, initialises Kokkos); exit status as
/// spk-bench's.
int compound_main(int argc, char** argv);

/// Prints the bytes of every compound layout of one case (on the host; Kokkos initialised),
/// as `spk-bench --memory-only --scalar TYPE` does for compound scalars.
void compound_memory_case(const std::string& scalar, const std::string& case_text);

}  // namespace spk_bench
