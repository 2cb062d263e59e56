// spk/compound/schedule.hpp: the parallel schedule of the compound SpMV (Mueller-Roemer et al.
// 2020, section 4.2): a fixed grid of n_SM * n_b teams of n_t threads, independent of the matrix
// size; teams take chunks of rows statically (team t: chunks t, t + T, t + 2T, ...) or dynamically
// (from an atomic counter). One thread computes one row.
#pragma once

#include <cstdio>
#include <string>

#include <spk/error.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/kokkos_compat.hpp>

namespace spk {

/// Static or dynamic distribution of row chunks over teams.
enum class ScheduleKind { static_chunks, dynamic_chunks };

/// A launch of the compound SpMV. Zero fields take the execution space's defaults
/// (resolve_schedule).
struct CompoundSchedule {
  ScheduleKind kind = ScheduleKind::static_chunks;
  int threads_per_team = 0;  ///< n_t
  int teams_per_sm = 0;      ///< n_b: teams per multiprocessor (league = n_SM * n_b)
  int rows_per_chunk = 0;    ///< rows a team takes at a time (default n_t: one per thread)

  friend bool operator==(const CompoundSchedule& a, const CompoundSchedule& b) {
    return a.kind == b.kind && a.threads_per_team == b.threads_per_team &&
           a.teams_per_sm == b.teams_per_sm && a.rows_per_chunk == b.rows_per_chunk;
  }
};

/// "static-t128-b8-r128" style description (the fields as given, 0 for defaults).
inline std::string to_string(const CompoundSchedule& s) {
  return std::string(s.kind == ScheduleKind::static_chunks ? "static" : "dynamic") + "-t" +
         std::to_string(s.threads_per_team) + "-b" + std::to_string(s.teams_per_sm) + "-r" +
         std::to_string(s.rows_per_chunk);
}

/// Parses to_string's form; throws std::invalid_argument naming the text otherwise.
inline CompoundSchedule parse_schedule(const std::string& text) {
  CompoundSchedule s;
  char kind[16] = {0};
  int t = 0, b = 0, r = 0, used = 0;
  const int got = std::sscanf(text.c_str(), "%15[a-z]-t%d-b%d-r%d%n", kind, &t, &b, &r, &used);
  require(got == 4 && std::size_t(used) == text.size() &&
              (std::string(kind) == "static" || std::string(kind) == "dynamic"),
          "spk::parse_schedule", "schedule '", text,
          "' is not of the form static|dynamic-t<n_t>-b<n_b>-r<rows>");
  s.kind = std::string(kind) == "static" ? ScheduleKind::static_chunks
                                         : ScheduleKind::dynamic_chunks;
  s.threads_per_team = t;
  s.teams_per_sm = b;
  s.rows_per_chunk = r;
  return s;
}

/// The schedule with defaults filled in for ExecSpace: on a GPU 128 threads per team and 8 teams
/// per multiprocessor, on a host space one thread per team and 4 teams per thread, chunks of 64
/// rows (one per thread on a GPU). Throws std::invalid_argument for negative fields.
template <class ExecSpace>
CompoundSchedule resolve_schedule(CompoundSchedule s) {
  require(s.threads_per_team >= 0 && s.teams_per_sm >= 0 && s.rows_per_chunk >= 0,
          "spk::CompoundSchedule", "negative field in ", to_string(s));
  constexpr bool gpu = impl::is_gpu_space<ExecSpace>();
  if (s.threads_per_team == 0) s.threads_per_team = gpu ? 128 : 1;
  if (s.teams_per_sm == 0) s.teams_per_sm = gpu ? 8 : 4;
  if (s.rows_per_chunk == 0) s.rows_per_chunk = gpu ? s.threads_per_team : 64;
  return s;
}

}  // namespace spk
