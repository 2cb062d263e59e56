// spk-bench's benchmark of matrices with compound entries (perf_tests/compound_bench.cpp).
#pragma once

namespace spk_bench {

/// True when the command line asks for the compound benchmark: --scalar names a quaternion or
/// block type, or --format mentions "compound".
bool wants_compound(int argc, char** argv);

/// The compound benchmark's main (parses its own options, initialises Kokkos); exit status as
/// spk-bench's.
int compound_main(int argc, char** argv);

}  // namespace spk_bench
